module github.com/ballast-sched/ballast/descheduler

go 1.26.0
