module github.com/ballast-sched/ballast/scheduler

go 1.26.0
