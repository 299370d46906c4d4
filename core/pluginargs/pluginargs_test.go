package pluginargs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// args is a plugin's args: a limit defaulted to 10 and valid up to 100.
type args struct {
	Limit *int
	Name  string
}

func (a *args) DeepCopy() *args {
	out := *a
	if a.Limit != nil {
		l := *a.Limit
		out.Limit = &l
	}
	return &out
}
func (a *args) DeepCopyObject() runtime.Object   { return a.DeepCopy() }
func (a *args) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func setDefaults(a *args) {
	if a.Limit == nil {
		ten := 10
		a.Limit = &ten
	}
}
func validate(path *field.Path, a *args) error {
	if *a.Limit > 100 {
		return field.ErrorList{field.Invalid(path.Child("limit"), *a.Limit, "at most 100")}.ToAggregate()
	}
	return nil
}

// other is args of another plugin.
type other struct{ args }

func TestDecode(t *testing.T) {
	ten, fifty, big := 10, 50, 500
	given := &args{Limit: &fifty, Name: "x"}
	for _, tc := range []struct {
		name    string
		obj     runtime.Object
		want    *args
		wantErr string
	}{
		// 10 is the default; 50 is kept; 500 is defaulted nowhere and
		// refused, after defaulting: what is validated is what runs.
		{name: "nil gives the defaults", want: &args{Limit: &ten}},
		{name: "typed nil gives the defaults", obj: (*args)(nil), want: &args{Limit: &ten}},
		{name: "set fields are kept", obj: given, want: &args{Limit: &fifty, Name: "x"}},
		{name: "invalid after defaults", obj: &args{Limit: &big}, wantErr: "invalid P args: limit: Invalid value: 500: at most 100"},
		{name: "another type", obj: &other{}, wantErr: "want args to be of type args, got *pluginargs.other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode("P", tc.obj, setDefaults, validate)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Decode() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decode() (-want,+got):\n%s", diff)
			}
		})
	}
	// The caller's args are copied, never defaulted in place.
	empty := &args{}
	if _, err := Decode("P", empty, setDefaults, validate); err != nil {
		t.Fatal(err)
	}
	if empty.Limit != nil {
		t.Error("Decode defaulted the caller's args")
	}
}
