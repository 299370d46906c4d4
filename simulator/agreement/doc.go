// Package agreement holds the tests that check Ballast's scheduler and
// descheduler judge a node alike: both read the usage statistic configured
// for each resource, so a node the scheduler's LoadAware filters out as hot
// is one the descheduler's LoadAwareBalance calls hot too. It lives in the
// simulator module, the one that imports both components.
package agreement
