package fn

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestParseFieldPath(t *testing.T) {
	tests := []struct {
		in      string
		want    string // steps rendered back
		wantErr string
	}{
		{in: "spec.template.spec.containers[name=foo].image", want: "spec.template.spec.containers[name=foo].image"},
		{in: "spec.containers.[name=foo].image", want: "spec.containers[name=foo].image"},
		{in: "spec.containers.3.image", want: "spec.containers[3].image"},
		{in: "spec.containers[0]", want: "spec.containers[0]"},
		{in: "spec.containers[name=a.b].image", want: "spec.containers[name=a.b].image"},
		{in: "metadata.annotations[config.kubernetes.io/function]", want: "metadata.annotations[config.kubernetes.io/function]"},
		{in: "args[=HOSTNAME]", want: "args[=HOSTNAME]"},
		{in: "items[*].name", want: "items[*].name"},
		{in: "{.spec.containers[?(@.name == 'manager')].image}", want: "spec.containers[name=manager].image"},
		{in: `{.spec.containers[?(.name=="x")].image}`, want: "spec.containers[name=x].image"},
		{in: "{.data['key.with.dots']}", want: "data[key.with.dots]"},
		{in: `{.metadata.annotations.config\.kubernetes\.io/x}`, want: "metadata.annotations[config.kubernetes.io/x]"},
		{in: "{.items[*].name}", want: "items[*].name"},
		{in: "{.items[-1]}", want: "items[-1]"},
		{in: "{.a[?(@.b.c != 2)]}", want: "a[b.c!=2]"},
		{in: "", wantErr: "empty field path"},
		{in: "{}", wantErr: "empty field path"},
		{in: "a[b", wantErr: "unclosed ["},
		{in: "a]b", wantErr: "] without ["},
		{in: "a[[b]]", wantErr: "nested ["},
		{in: "{.a..b}", wantErr: "recursive descent"},
		{in: "{.a[1:3]}", want: "a[1:3]"},
		{in: "{.spec.files[:].content}", want: "spec.files[:].content"},
		{in: "{.a[-2:]}", want: "a[-2:]"},
		{in: "{.a[::2]}", want: "a[::2]"},
		{in: "{.a[1:2:0]}", wantErr: "step must be greater than 0"},
		{in: "{.a[1:x]}", wantErr: "is not a number"},
		{in: "{.a[1:2:3:4]}", wantErr: "more than three parts"},
		{in: "{.a", wantErr: "must end with }"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := parseFieldPath(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.prefix(len(p.steps)); got != tc.want {
				t.Errorf("parsed as %q, want %q", got, tc.want)
			}
		})
	}
}

const walkDoc = `
spec:
  list: [a, b, c]
  empty:
  containers:
  - name: app
    image: app:1
    port: 8080
  - name: side
    image: side:1
`

func TestWalk(t *testing.T) {
	tests := []struct {
		path    string
		create  bool
		want    []string // scalar values found, or "map"/"list"
		wantErr string
	}{
		{path: "spec.containers[name=side].image", want: []string{"side:1"}},
		{path: "spec.containers[port=8080.0].name", want: []string{"app"}},
		{path: "spec.containers[*].name", want: []string{"app", "side"}},
		{path: "spec.containers[-1].name", want: []string{"side"}},
		{path: "spec.list[=b]", want: []string{"b"}},
		{path: "{.spec.containers[:].name}", want: []string{"app", "side"}},
		{path: "{.spec.list[1:]}", want: []string{"b", "c"}},
		{path: "{.spec.list[-2:]}", want: []string{"b", "c"}},
		{path: "{.spec.list[0:3:2]}", want: []string{"a", "c"}},
		{path: "{.spec.list[1:1]}", want: nil},
		{path: "{.spec.list[0:4]}", wantErr: "spec.list, slice [0:4]: array index out of bounds: index 3, length 3"},
		{path: "{.spec.list[2:1]}", wantErr: "starting index 2 is greater than ending index 1"},
		{path: "{.spec[:]}", wantErr: "spec is a map, not a list, so it has no slice [:]"},
		{path: "spec.containers[name=none].image", want: nil},
		{path: "spec.missing.deeper", want: nil},
		{path: "spec.missing.deeper", create: true, want: []string{"map"}},
		{path: "spec.empty.x", create: true, want: []string{"map"}},
		{path: "spec.list.x", wantErr: "spec.list is a list, not a map"},
		{path: "spec.containers.5", wantErr: "index 5, length 2"},
		{path: "spec[name=x]", wantErr: "spec is a map, not a list"},
		{path: "spec.containers[0].name.x", wantErr: "is a scalar, not a map"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			doc := yaml.MustParse(walkDoc)
			p, err := parseFieldPath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := p.walk(doc.YNode(), tc.create)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range nodes {
				switch n.Kind {
				case yaml.MappingNode:
					got = append(got, "map")
				case yaml.SequenceNode:
					got = append(got, "list")
				default:
					got = append(got, n.Value)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("found %v, want %v", got, tc.want)
			}
			if tc.create {
				if _, err := doc.Pipe(yaml.Lookup(strings.Split(tc.path, ".")...)); err != nil {
					t.Errorf("created path not in the document: %v", err)
				}
			}
		})
	}
}

func TestObjRefMatching(t *testing.T) {
	items := []*yaml.RNode{
		yaml.MustParse("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod, labels: {tier: web}}"),
		yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}"),
		yaml.MustParse("apiVersion: airshipit.org/v1alpha1\nkind: VariableCatalogue\nmetadata: {name: versions}"),
	}
	tests := []struct {
		ref  ObjRef
		want []string
	}{
		{ObjRef{Kind: "Deployment"}, []string{"web"}},
		{ObjRef{Group: "apps"}, []string{"web"}},
		{ObjRef{Version: "v1"}, []string{"web", "web-config"}},
		{ObjRef{Group: "", Version: "v1alpha1"}, []string{"versions"}},
		{ObjRef{APIVersion: "v1"}, []string{"web-config"}},
		{ObjRef{Name: "web"}, []string{"web"}},
		{ObjRef{Name: "web.*"}, []string{"web", "web-config"}},
		{ObjRef{Name: "web", Namespace: "prod"}, []string{"web"}},
		{ObjRef{Name: "web", Namespace: "dev"}, nil},
		{ObjRef{LabelSelector: "tier=web"}, []string{"web"}},
		{ObjRef{Name: "ver[sions"}, nil}, // not a valid expression: matched literally
	}
	for _, tc := range tests {
		t.Run(tc.ref.String(), func(t *testing.T) {
			m, err := newMatcher(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range m.filter(items) {
				got = append(got, n.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("matched %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := newMatcher(ObjRef{LabelSelector: "a in (("}); err == nil {
		t.Error("invalid label selector: no error")
	}
}
