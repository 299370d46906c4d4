package prometheus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want field.ErrorList
	}{
		{name: "valid", cfg: Config{Address: "https://prometheus.monitoring:9090", QuerySet: QuerySetKubePrometheus}},
		{
			name: "missing address",
			cfg:  Config{QuerySet: QuerySetAuto},
			want: field.ErrorList{field.Required(field.NewPath("p", "address"), "")},
		},
		{
			name: "address without scheme and unknown set",
			cfg:  Config{Address: "prometheus:9090", QuerySet: "victoria"},
			want: field.ErrorList{
				field.Invalid(field.NewPath("p", "address"), nil, ""),
				field.NotSupported[string](field.NewPath("p", "querySet"), nil, nil),
			},
		},
		{
			name: "missing query set is the default",
			cfg:  Config{Address: "http://prometheus.monitoring:9090"},
		},
		{
			name: "token over plain http",
			cfg:  Config{Address: "http://prometheus.monitoring:9090", BearerTokenFile: "/var/run/secrets/token"},
			want: field.ErrorList{field.Invalid(field.NewPath("p", "bearerTokenFile"), nil, "")},
		},
		{
			name: "token over plain http, allowed",
			cfg:  Config{Address: "http://prometheus.monitoring:9090", BearerTokenFile: "/var/run/secrets/token", AllowInsecureBearerToken: true},
		},
		{
			name: "token over https",
			cfg:  Config{Address: "HTTPS://prometheus.monitoring:9090", BearerTokenFile: "/var/run/secrets/token"},
		},
		{
			name: "negative answer limit",
			cfg:  Config{Address: "https://prometheus.monitoring:9090", QuerySet: QuerySetAuto, MaxResponseBytes: -1},
			want: field.ErrorList{field.Invalid(field.NewPath("p", "maxResponseBytes"), nil, "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.SetDefaults() // as New does
			err := tt.cfg.Validate(field.NewPath("p"))
			var got field.ErrorList
			if agg, ok := err.(utilerrors.Aggregate); ok {
				for _, e := range agg.Errors() {
					got = append(got, e.(*field.Error))
				}
			} else if err != nil {
				t.Fatalf("want an aggregate of field errors, got %T: %v", err, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("Validate (-want,+got):\n%s", diff)
			}
		})
	}
}
