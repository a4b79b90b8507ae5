package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

const testToken = "t0ken-for-tests"

func put(t *testing.T, h http.Handler, target, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPut, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func nodeLabels(t *testing.T, cs kubernetes.Interface, name string) map[string]string {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Labels
}

func createNode(t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	_, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNodeLabelsAPI changes a Node's labels through the API on a real API
// server and checks the Node before and after every request.
func TestNodeLabelsAPI(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	h := newServer(t, Options{Token: testToken, Kube: cs})
	auth := []string{"X-Auth-Token", testToken}
	initial := map[string]string{
		"kubernetes.io/hostname": "n1", "kubernetes-etcd": "enabled",
		"keep": "1", "change": "old", "drop": "x",
	}
	createNode(t, cs, "n1", initial)

	refused := func(t *testing.T, rec *httptest.ResponseRecorder, code int, param, msg string) {
		t.Helper()
		if rec.Code != code {
			t.Fatalf("status %d, want %d: %s", rec.Code, code, rec.Body)
		}
		st := decodeStatus(t, rec.Body.Bytes())
		if st.Parameter != param || !strings.Contains(st.Message, msg) || st.Code != code || st.Status != "Failure" {
			t.Fatalf("got %+v, want parameter %q and a message with %q", st, param, msg)
		}
		if got := nodeLabels(t, cs, "n1"); !reflect.DeepEqual(got, initial) {
			t.Fatalf("a refused request changed the labels: %v", got)
		}
	}
	good := `{"keep": "1", "change": "new", "add": "y", "kubernetes-etcd": "enabled"}`

	for _, tc := range []struct {
		name, target, body string
		header             []string
		code               int
		param, msg         string
	}{
		{"no token", "/api/v1.0/node-labels/n1", good, nil, 401, "", "bearer token"},
		{"wrong token", "/api/v1.0/node-labels/n1", good, []string{"Authorization", "Bearer nope"}, 401, "", "bearer token"},
		{"unknown node", "/api/v1.0/node-labels/n9", good, auth, 404, "node", `node "n9" not found`},
		{"malformed node name", "/api/v1.0/node-labels/N_1", good, auth, 400, "node", "not a valid node name"},
		{"malformed key", "/api/v1.0/node-labels/n1", `{"keep": "1", "bad key!": "x"}`, auth, 400, "bad key!", "invalid label key"},
		{"malformed value", "/api/v1.0/node-labels/n1", `{"keep": "not ok"}`, auth, 400, "keep", `invalid value "not ok"`},
		{"value not a string", "/api/v1.0/node-labels/n1", `{"keep": 1}`, auth, 400, "keep", "string or null"},
		{"body not JSON", "/api/v1.0/node-labels/n1", `keep=1`, auth, 400, "body", "JSON object"},
		{"bad force", "/api/v1.0/node-labels/n1?force=maybe", good, auth, 400, "force", "not a boolean"},
		{"etcd label removed without force", "/api/v1.0/node-labels/n1", `{"keep": "1", "change": "old", "drop": "x"}`, auth, 409, "kubernetes-etcd", "refusing to remove label kubernetes-etcd without force=true: it adds the node to (or takes it out of) the Kubernetes etcd cluster"},
		{"apiserver label added without force", "/api/v1.0/node-labels/n1", `{"keep": "1", "change": "old", "drop": "x", "kubernetes-etcd": "enabled", "kubernetes-apiserver": "enabled"}`, auth, 409, "kubernetes-apiserver", "refusing to add label kubernetes-apiserver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, put(t, h, tc.target, tc.body, tc.header...), tc.code, tc.param, tc.msg)
		})
	}

	t.Run("wrong method", func(t *testing.T) {
		rec := get(t, h, "/api/v1.0/node-labels/n1", auth...)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "PUT" {
			t.Fatalf("status %d, Allow %q: %s", rec.Code, rec.Header().Get("Allow"), rec.Body)
		}
	})

	t.Run("labels applied and removed are exactly those asked for", func(t *testing.T) {
		rec := put(t, h, "/api/v1.0/node-labels/n1", good, auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		want := map[string]string{"kubernetes.io/hostname": "n1", "kubernetes-etcd": "enabled", "keep": "1", "change": "new", "add": "y"}
		if got := nodeLabels(t, cs, "n1"); !reflect.DeepEqual(got, want) {
			t.Fatalf("labels %v, want %v", got, want)
		}
		var resp NodeLabelsResponse
		decodeJSON(t, rec.Body.Bytes(), &resp)
		if !reflect.DeepEqual(resp.Added, map[string]string{"add": "y"}) || !reflect.DeepEqual(resp.Changed, map[string]string{"change": "new"}) ||
			!reflect.DeepEqual(resp.Removed, []string{"drop"}) || !reflect.DeepEqual(resp.Labels, want) || resp.Status != "Success" {
			t.Fatalf("response %+v", resp)
		}
		// The same request again changes nothing.
		rv := resourceVersion(t, cs, "n1")
		rec = put(t, h, "/api/v1.0/node-labels/n1", good, auth...)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "already has these labels") {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if got := resourceVersion(t, cs, "n1"); got != rv {
			t.Errorf("an unchanged label set updated the node (resourceVersion %s -> %s)", rv, got)
		}
		initial = want
	})

	t.Run("forbidden change applied with force", func(t *testing.T) {
		rec := put(t, h, "/api/v1.0/node-labels/n1?force=true", `{"keep": "1", "kubernetes-apiserver": "enabled"}`, auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		want := map[string]string{"kubernetes.io/hostname": "n1", "keep": "1", "kubernetes-apiserver": "enabled"}
		if got := nodeLabels(t, cs, "n1"); !reflect.DeepEqual(got, want) {
			t.Fatalf("labels %v, want %v", got, want)
		}
		initial = want
	})

	t.Run("null removes a label in the Kubernetes namespaces", func(t *testing.T) {
		rec := put(t, h, "/api/v1.0/node-labels/n1", `{"keep": "1", "kubernetes-apiserver": "enabled", "kubernetes.io/hostname": null}`, auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		want := map[string]string{"keep": "1", "kubernetes-apiserver": "enabled"}
		if got := nodeLabels(t, cs, "n1"); !reflect.DeepEqual(got, want) {
			t.Fatalf("labels %v, want %v", got, want)
		}
	})

	t.Run("concurrent requests leave exactly one requested set", func(t *testing.T) {
		// Each request asks for a different label set. Every patch is
		// computed against the resourceVersion it read, so the node ends
		// with exactly one of the sets; patches computed from stale labels
		// would leave a mixture.
		createNode(t, cs, "n2", map[string]string{"kubernetes.io/hostname": "n2"})
		const n = 6
		var wg sync.WaitGroup
		codes := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"set": "s%d", "only-s%d": "y"}`, i, i)
				rec := put(t, h, "/api/v1.0/node-labels/n2", body, auth...)
				codes[i] = rec.Code
				if rec.Code != http.StatusOK {
					t.Logf("request %d: %s", i, rec.Body)
				}
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != http.StatusOK {
				t.Errorf("request %d: status %d", i, c)
			}
		}
		got := nodeLabels(t, cs, "n2")
		i := strings.TrimPrefix(got["set"], "s")
		want := map[string]string{"kubernetes.io/hostname": "n2", "set": "s" + i, "only-s" + i: "y"}
		if !maps.Equal(got, want) {
			t.Fatalf("labels %v, want one requested set such as %v", got, want)
		}
	})
}

func resourceVersion(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.ResourceVersion
}

func TestNodeLabelsWithoutKubernetes(t *testing.T) {
	h := newServer(t, Options{Token: testToken})
	rec := put(t, h, "/api/v1.0/node-labels/n1", `{"a": "b"}`, "X-Auth-Token", testToken)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "--kubeconfig") {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	// Auth comes first: no token is a 401 even here.
	if rec := put(t, h, "/api/v1.0/node-labels/n1", `{"a": "b"}`); rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d without a token: %s", rec.Code, rec.Body)
	}
}

func removalURL(params map[string]string) string {
	q := url.Values{}
	for k, v := range params {
		q.Set(k, v)
	}
	return "/api/v1.0/removal-scripts?" + q.Encode()
}

func TestRemovalScripts(t *testing.T) {
	dir, _ := design(t)
	h := newServer(t, Options{DesignRoot: dir, Token: testToken})
	auth := []string{"X-Auth-Token", testToken}

	t.Run("node of the design", func(t *testing.T) {
		rec := get(t, h, removalURL(map[string]string{"hostname": "n1", "design_ref": dir}), auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		body := rec.Body.String()
		if rec.Header().Get("Content-Type") != "text/x-shellscript" || !strings.Contains(rec.Header().Get("Content-Disposition"), "remove-n1.sh") {
			t.Errorf("headers %v", rec.Header())
		}
		for _, want := range []string{"NODE_NAME=n1\n", "kctl drain", "kubernetes-etcd- ", "kctl delete node"} {
			if !strings.Contains(body, want) {
				t.Errorf("script lacks %q", want)
			}
		}
	})
	t.Run("genesis node", func(t *testing.T) {
		rec := get(t, h, removalURL(map[string]string{"hostname": "n0", "design_ref": dir}), auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		body := rec.Body.String()
		if !strings.Contains(rec.Header().Get("Content-Disposition"), "remove-n0.sh") || !strings.Contains(body, "NODE_NAME=n0\n") || !strings.Contains(body, "auxiliary-0") {
			t.Errorf("headers %v; script:\n%s", rec.Header(), body)
		}
	})
	t.Run("node joined through the API", func(t *testing.T) {
		rec := get(t, h, removalURL(map[string]string{"hostname": "n7", "ip": "192.168.77.17", "labels.dynamic": "rack=r7", "design_ref": dir}), auth...)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if body := rec.Body.String(); !strings.Contains(body, "NODE_NAME=n7\n") || !strings.Contains(body, "label node \"${NODE_NAME}\" rack-\n") {
			t.Errorf("script:\n%s", body)
		}
	})
	for _, tc := range []struct {
		name   string
		params map[string]string
		header []string
		code   int
		param  string
		msg    string
	}{
		{"no token", map[string]string{"hostname": "n1", "design_ref": dir}, nil, 401, "", "bearer token"},
		{"wrong token", map[string]string{"hostname": "n1", "design_ref": dir}, []string{"X-Auth-Token", "nope"}, 401, "", "bearer token"},
		{"missing hostname", map[string]string{"design_ref": dir}, auth, 400, "hostname", "required parameter hostname"},
		{"missing design_ref", map[string]string{"hostname": "n1"}, auth, 400, "design_ref", "required parameter design_ref"},
		{"outside the design root", map[string]string{"hostname": "n1", "design_ref": "../"}, auth, 400, "design_ref", "outside the design root"},
		{"unknown node without ip", map[string]string{"hostname": "n8", "design_ref": dir}, auth, 400, "ip", "not in the design"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, removalURL(tc.params), tc.header...)
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			st := decodeStatus(t, rec.Body.Bytes())
			if st.Parameter != tc.param || !strings.Contains(st.Message, tc.msg) {
				t.Fatalf("got %+v, want parameter %q and a message with %q", st, tc.param, tc.msg)
			}
			if strings.Contains(rec.Body.String(), testToken) {
				t.Error("the token is in the response")
			}
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, removalURL(map[string]string{"hostname": "n1", "design_ref": dir}), nil)
		req.Header.Set("X-Auth-Token", testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
			t.Fatalf("status %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
		}
	})
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// TestNodeLabelsWithShippedRBAC runs the node-labels API as the service
// account config/promenade installs (impersonated on a real API server
// with RBAC): it may read Nodes and patch their labels, and nothing more.
func TestNodeLabelsWithShippedRBAC(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx := context.Background()
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "promenade-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, u := range testenv.Kustomize(t, filepath.Join("config", "promenade", "rbac")) {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	createNode(t, admin, "n1", map[string]string{"kubernetes.io/hostname": "n1", "rack": "r1"})

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:promenade-system:promenade"}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := newServer(t, Options{Token: testToken, Kube: sa})
	rec := put(t, h, "/api/v1.0/node-labels/n1", `{"rack": "r2", "zone": "z1"}`, "X-Auth-Token", testToken)
	if rec.Code != http.StatusOK {
		t.Fatalf("node-labels as the shipped service account: status %d: %s", rec.Code, rec.Body)
	}
	if got, want := nodeLabels(t, admin, "n1"), map[string]string{"kubernetes.io/hostname": "n1", "rack": "r2", "zone": "z1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	// Least privilege: no other verb on Nodes, nothing on Secrets or Pods.
	for name, call := range map[string]func() error{
		"delete node": func() error { return sa.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}) },
		"list nodes":  func() error { _, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
		"list secrets": func() error {
			_, err := sa.CoreV1().Secrets("promenade-system").List(ctx, metav1.ListOptions{})
			return err
		},
		"create pod": func() error {
			_, err := sa.CoreV1().Pods("promenade-system").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("%s as the shipped service account: %v, want forbidden", name, err)
		}
	}
}
