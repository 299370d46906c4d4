package policy

import (
	"testing"

	"github.com/ballast-sched/ballast/descheduler/config"
)

func TestBalanceArgsAreTheDeschedulersOwn(t *testing.T) {
	args, err := BalanceArgs([]byte(config.Policy))
	if err != nil || args == nil {
		t.Fatalf("args %v, %v", args, err)
	}
	// Set by the shipped policy, and defaulted.
	if args.DeviationThresholds["cpu"] != 10 || args.HighThresholds["memory"] != 85 || args.Window == nil {
		t.Errorf("args %+v: want the policy's deviation and the defaults", args)
	}
	if _, err := BalanceArgs([]byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [{name: x, pluginConfig: [{name: LoadAwareBalance, args: {lowThresholds: {cpu: 0}}}]}]\n")); err == nil {
		t.Error("an invalid policy was read")
	}
}
