module github.com/ballast-sched/ballast/load-watcher

go 1.26.0
