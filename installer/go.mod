module github.com/ballast-sched/ballast/installer

go 1.26.0
