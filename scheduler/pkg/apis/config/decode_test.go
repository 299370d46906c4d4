package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/pluginargs"
	"github.com/ballast-sched/ballast/core/usage"
)

// LoadAware's args as its constructor decodes them (core/pluginargs).
func TestDecodeLoadAwareArgs(t *testing.T) {
	defaults := &LoadAwareArgs{}
	SetDefaults_LoadAwareArgs(defaults)
	custom := &LoadAwareArgs{Settings: loadmodel.Settings{Thresholds: map[usage.Resource]float64{usage.Memory: 70}}}
	wantCustom := custom.DeepCopy()
	SetDefaults_LoadAwareArgs(wantCustom)
	tests := []struct {
		name    string
		obj     runtime.Object
		want    *LoadAwareArgs
		wantErr string
	}{
		{name: "nil gives the defaults", want: defaults},
		{name: "typed nil gives the defaults", obj: (*LoadAwareArgs)(nil), want: defaults},
		{name: "set fields are kept, the rest defaulted", obj: custom, want: wantCustom},
		{name: "another type", obj: &UsageAwareFitArgs{}, wantErr: "want args to be of type LoadAwareArgs, got *config.UsageAwareFitArgs"},
		{name: "invalid", obj: &LoadAwareArgs{Settings: loadmodel.Settings{Thresholds: map[usage.Resource]float64{usage.CPU: 120}}},
			wantErr: "invalid LoadAware args: thresholds[cpu]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pluginargs.Decode("LoadAware", tt.obj, SetDefaults_LoadAwareArgs, ValidateLoadAwareArgs)
			if tt.wantErr != "" {
				if err == nil || len(err.Error()) < len(tt.wantErr) || err.Error()[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("DecodeArgs() error = %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("DecodeArgs() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
	// The caller's args are never defaulted in place.
	if custom.ThresholdStatistics != nil {
		t.Error("DecodeArgs defaulted the caller's args")
	}
}
