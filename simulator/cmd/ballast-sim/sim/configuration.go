package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/ballast-sched/ballast/simulator/sim/record"

	engine "github.com/ballast-sched/ballast/simulator/sim"
	"github.com/ballast-sched/ballast/simulator/simvalues"
)

// ballastOptions configures the Ballast run from the flags: the chart
// rendered with the value flags, raw files, or neither (shipped defaults).
// It runs before the scenario is read or anything started, so values the
// chart refuses stop the command with the chart's error at once.
func ballastOptions(ctx context.Context, flags *flagpole) (engine.Options, error) {
	opts := engine.Options{DeschedulerEvery: flags.DeschedulerEvery}
	values, files := valueInputs(flags), fileInputs(flags)
	if len(values) > 0 && len(files) > 0 {
		return opts, fmt.Errorf("%s and %s both configure the Ballast run: give chart values or configuration files, not both",
			flagNames(values), flagNames(files))
	}
	if len(values) == 0 {
		var err error
		if opts.SchedulerConfig, err = readOptional(flags.SchedulerConfig, "scheduler configuration"); err != nil {
			return opts, err
		}
		if opts.DeschedulerPolicy, err = readOptional(flags.Policy, "descheduler policy"); err != nil {
			return opts, err
		}
		opts.Configuration = record.Configuration{Source: record.ConfigShipped}
		if len(files) > 0 {
			opts.Configuration = record.Configuration{Source: record.ConfigFiles, Inputs: files}
		}
		return opts, nil
	}
	vals, err := flags.Values.Merge()
	if err != nil {
		return opts, err
	}
	cfg, err := simvalues.Render(ctx, vals)
	if err != nil {
		return opts, fmt.Errorf("the chart does not accept the values: %w", err)
	}
	opts.SchedulerConfig, opts.DeschedulerPolicy, opts.Windows = cfg.SchedulerConfig, cfg.DeschedulerPolicy, cfg.Windows
	if opts.DeschedulerEvery == 0 {
		opts.DeschedulerEvery = cfg.DeschedulingInterval
	}
	opts.Configuration = record.Configuration{Source: record.ConfigValues, Inputs: values}
	return opts, nil
}

// valueInputs lists the value flags given, in the order Helm merges them
// (later ones win), each as "flag value".
func valueInputs(flags *flagpole) []string {
	var in []string
	for _, group := range []struct {
		flag   string
		values []string
	}{
		{"-f", flags.Values.ValueFiles},
		{"--set", flags.Values.Values},
		{"--set-string", flags.Values.StringValues},
		{"--set-file", flags.Values.FileValues},
	} {
		for _, v := range group.values {
			in = append(in, group.flag+" "+v)
		}
	}
	return in
}

// fileInputs lists the configuration file flags given, each as "flag path".
func fileInputs(flags *flagpole) []string {
	var in []string
	if flags.SchedulerConfig != "" {
		in = append(in, "--scheduler-config "+flags.SchedulerConfig)
	}
	if flags.Policy != "" {
		in = append(in, "--descheduler-policy "+flags.Policy)
	}
	return in
}

// flagNames lists the distinct flag names of inputs.
func flagNames(inputs []string) string {
	var names []string
	for _, in := range inputs {
		name, _, _ := strings.Cut(in, " ")
		if name == "-f" {
			name = "-f/--values"
		}
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}
