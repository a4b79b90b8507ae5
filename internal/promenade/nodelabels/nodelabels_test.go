package nodelabels

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func s(v string) *string { return &v }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Request
		field, msg string
	}{
		{name: "labels", body: `{"a": "1", "example.com/b": "", "c": null}`, want: Request{"a": s("1"), "example.com/b": s(""), "c": nil}},
		{name: "empty object", body: `{}`, want: Request{}},
		{name: "not JSON", body: `a=1`, field: "body", msg: "JSON object"},
		{name: "array", body: `["a"]`, field: "body", msg: "JSON object"},
		{name: "null", body: `null`, field: "body", msg: "not null"},
		{name: "bad key", body: `{"a b": "1"}`, field: "a b", msg: `invalid label key "a b"`},
		{name: "bad prefix", body: `{"Bad_Prefix/x": "1"}`, field: "Bad_Prefix/x", msg: "invalid label key"},
		{name: "bad value", body: `{"a": "x y"}`, field: "a", msg: `invalid value "x y" of label a`},
		{name: "long value", body: `{"a": "` + strings.Repeat("x", 64) + `"}`, field: "a", msg: "invalid value"},
		{name: "number", body: `{"a": 1}`, field: "a", msg: "string or null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body))
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("got %v, want a field error on %q containing %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	existing := map[string]string{
		"kubernetes.io/hostname": "n1", "node-role.kubernetes.io/worker": "", "keep": "1", "change": "old", "drop": "x",
	}
	got := Diff(existing, Request{"keep": s("1"), "change": s("new"), "add": s("y"), "absent-null": nil, "node-role.kubernetes.io/worker": nil})
	want := Change{
		Added:   map[string]string{"add": "y"},
		Changed: map[string]string{"change": "new"},
		Removed: []string{"drop", "node-role.kubernetes.io/worker"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if c := Diff(map[string]string{"a": "1", "kubernetes.io/os": "linux"}, Request{"a": s("1")}); !c.Empty() {
		t.Fatalf("unchanged labels give %+v", c)
	}
	if c := Diff(nil, Request{"a": nil}); !c.Empty() {
		t.Fatalf("removing an absent label gives %+v", c)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing map[string]string
		req      Request
		label    string
		change   string
	}{
		{name: "ordinary labels", existing: map[string]string{"a": "1"}, req: Request{"b": s("2")}},
		{name: "protected unchanged", existing: map[string]string{"kubernetes-etcd": "enabled"}, req: Request{"kubernetes-etcd": s("enabled"), "b": s("2")}},
		{name: "add etcd", existing: map[string]string{}, req: Request{"kubernetes-etcd": s("enabled")}, label: "kubernetes-etcd", change: "add"},
		{name: "remove apiserver by omission", existing: map[string]string{"kubernetes-apiserver": "enabled"}, req: Request{}, label: "kubernetes-apiserver", change: "remove"},
		{name: "change calico etcd", existing: map[string]string{"calico-etcd": "enabled"}, req: Request{"calico-etcd": s("disabled")}, label: "calico-etcd", change: "change"},
		{name: "remove control-plane role by null", existing: map[string]string{"node-role.kubernetes.io/control-plane": ""}, req: Request{"node-role.kubernetes.io/control-plane": nil}, label: "node-role.kubernetes.io/control-plane", change: "remove"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Diff(tc.existing, tc.req)
			if err := c.Check(true); err != nil {
				t.Fatalf("with force: %v", err)
			}
			err := c.Check(false)
			if tc.label == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *ForbiddenError
			if !errors.As(err, &fe) || fe.Label != tc.label || fe.Change != tc.change || !strings.Contains(err.Error(), "force=true") || fe.Reason == "" {
				t.Fatalf("got %v, want %s of %s refused", err, tc.change, tc.label)
			}
		})
	}
}
