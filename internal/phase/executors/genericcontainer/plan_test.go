package genericcontainer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
)

func TestMakePlan(t *testing.T) {
	found := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			if slices.Contains(names, n) {
				return "/usr/bin/" + n, nil
			}
			return "", errors.New("not found")
		}
	}
	base := planInput{targetPath: "/sites", siteDir: "/sites/repo/manifests/site", home: "/home/u", uid: 1000, gid: 1001,
		kubeconfigPath: "/tmp/run/kubeconfig", lookPath: found()}
	with := func(spec v1.GenericContainerSpec, cluster string, look func(string) (string, error)) planInput {
		in := base
		in.spec, in.cluster = spec, cluster
		if look != nil {
			in.lookPath = look
		}
		return in
	}
	cases := []struct {
		name        string
		in          planInput
		mode        Mode
		builtin     string
		runtime     string
		args        []string
		env         []string
		sink        string
		mountSrc    []string
		timeout     time.Duration
		kubeconfig  bool
		defaultType v1.GenericContainerType
	}{
		{name: "sops image, krm: built in", in: with(v1.GenericContainerSpec{Type: "krm", Image: "gcr.io/kpt-fn-contrib/sops:v0.3.0", SinkOutputDir: "./"}, "", nil),
			mode: ModeBuiltin, builtin: "sops", sink: "/sites/repo/manifests/site", defaultType: "krm"},
		{name: "templater with a digest, no type: built in, airship type", in: with(v1.GenericContainerSpec{Image: "quay.io/airshipit/templater@sha256:abc"}, "", nil),
			mode: ModeBuiltin, builtin: "templater", defaultType: "airship"},
		{name: "builtin image with its own cmd needs the image", in: with(v1.GenericContainerSpec{Image: "localhost/replacement-transformer", Airship: v1.AirshipContainerSpec{Cmd: []string{"/bin/sh"}}}, "", found("podman")),
			mode: ModeRuntime, runtime: "podman", args: []string{"run", "--rm", "-i", "localhost/replacement-transformer", "/bin/sh"}, defaultType: "airship"},
		{name: "toolbox, krm, cluster: local script", in: with(v1.GenericContainerSpec{Type: "krm", Image: "localhost/toolbox", HostNetwork: true,
			EnvVars: []string{"RESOURCE_KIND_FILTER=Cluster", "HTTPS_PROXY"}}, "target-cluster", nil),
			mode: ModeScript, env: []string{"RESOURCE_KIND_FILTER=Cluster", "HTTPS_PROXY (from the environment)"}, kubeconfig: true, defaultType: "krm"},
		{name: "toolbox-virsh with a tag: local script", in: with(v1.GenericContainerSpec{Image: "quay.io/airshipit/toolbox-virsh:latest",
			StorageMounts: []v1.StorageMount{{MountType: "bind", Src: "/var/run/libvirt/libvirt-sock", DstPath: "/var/run/libvirt/libvirt-sock"}}}, "", nil),
			mode: ModeScript, mountSrc: []string{"/var/run/libvirt/libvirt-sock"}, defaultType: "airship"},
		{name: "other image, airship type, docker found: privileged, host network, mounts, env, kubeconfig",
			in: with(v1.GenericContainerSpec{Image: "quay.io/airshipit/image-builder:latest", HostNetwork: true, Timeout: 90,
				Airship: v1.AirshipContainerSpec{Privileged: true, Cmd: []string{"/bin/bash", "-c", "run"}},
				StorageMounts: []v1.StorageMount{
					{MountType: "bind", Src: "~/images", DstPath: "/config", ReadWriteMode: true},
					{MountType: "bind", Src: "certs", DstPath: "/certs"},
				},
				EnvVars: []string{"IMAGE_TYPE=iso", "http_proxy"}}, "ephemeral-cluster", found("docker", "podman")),
			mode: ModeRuntime, runtime: "docker", timeout: 90 * time.Second, kubeconfig: true, defaultType: "airship",
			mountSrc: []string{"/home/u/images", "/sites/certs"},
			env:      []string{"IMAGE_TYPE=iso", "http_proxy (from the environment)"},
			args: []string{"run", "--rm", "-i", "--network", "host", "--privileged",
				"--mount", "type=bind,source=/home/u/images,target=/config",
				"--mount", "type=bind,source=/sites/certs,target=/certs,readonly",
				"--mount", "type=bind,source=/tmp/run/kubeconfig,target=/kubeconfig,readonly",
				"-e", "IMAGE_TYPE=iso", "-e", "http_proxy", "-e", "KUBECONFIG=/kubeconfig", "-e", "KCTL_CONTEXT=ephemeral-cluster",
				"quay.io/airshipit/image-builder:latest", "/bin/bash", "-c", "run"}},
		{name: "other image, krm type: no network, current user, no privilege escalation",
			in:   with(v1.GenericContainerSpec{Type: "krm", Image: "localhost/cloud-init", SinkOutputDir: "out"}, "", found("podman")),
			mode: ModeRuntime, runtime: "podman", sink: "/sites/repo/manifests/site/out", defaultType: "krm",
			args: []string{"run", "--rm", "-i", "--network", "none", "--user", "1000:1001", "--security-opt=no-new-privileges", "localhost/cloud-init"}},
		{name: "containerRuntime podman asked, only docker found: none",
			in:   with(v1.GenericContainerSpec{Image: "localhost/applier", Airship: v1.AirshipContainerSpec{ContainerRuntime: "podman"}}, "", found("docker")),
			mode: ModeRuntime, runtime: "", defaultType: "airship", args: []string{"run", "--rm", "-i", "localhost/applier"}},
		{name: "no runtime on PATH", in: with(v1.GenericContainerSpec{Image: "localhost/applier"}, "", nil),
			mode: ModeRuntime, runtime: "", defaultType: "airship", args: []string{"run", "--rm", "-i", "localhost/applier"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := makePlan(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != tc.mode || p.Builtin != tc.builtin || p.Runtime != tc.runtime {
				t.Errorf("mode %s builtin %q runtime %q, want %s %q %q", p.Mode, p.Builtin, p.Runtime, tc.mode, tc.builtin, tc.runtime)
			}
			if p.Type != tc.defaultType {
				t.Errorf("type %q, want %q", p.Type, tc.defaultType)
			}
			if tc.mode == ModeRuntime && !slices.Equal(p.Args, tc.args) {
				t.Errorf("args\n got %q\nwant %q", p.Args, tc.args)
			}
			var env []string
			for _, e := range p.Env {
				env = append(env, e.String())
			}
			if !slices.Equal(env, tc.env) {
				t.Errorf("env %q, want %q", env, tc.env)
			}
			if p.Sink != tc.sink {
				t.Errorf("sink %q, want %q", p.Sink, tc.sink)
			}
			var srcs []string
			for _, m := range p.Mounts {
				srcs = append(srcs, m.Src)
			}
			if !slices.Equal(srcs, tc.mountSrc) {
				t.Errorf("mount sources %q, want %q", srcs, tc.mountSrc)
			}
			if p.Timeout != tc.timeout || p.Kubeconfig != tc.kubeconfig {
				t.Errorf("timeout %s kubeconfig %v, want %s %v", p.Timeout, p.Kubeconfig, tc.timeout, tc.kubeconfig)
			}
		})
	}
}

func TestScriptEnvMapsMountedPaths(t *testing.T) {
	p := &Plan{
		Env: []EnvVar{{Name: "TGT_KUBECONFIG", Value: "/tmp-kubeconfig"}, {Name: "CONF", Value: "/config/builder.yaml"},
			{Name: "OTHER", Value: "/configuration"}, {Name: "PROXY", FromEnv: true}, {Name: "UNSET", FromEnv: true}},
		Mounts:     []v1.StorageMount{{Src: "/home/u/.airship/kubeconfig", DstPath: "/tmp-kubeconfig"}, {Src: "/srv/images", DstPath: "/config"}},
		Kubeconfig: true, Context: "target-cluster",
	}
	getenv := func(k string) string {
		return map[string]string{"PATH": "/usr/bin", "HOME": "/home/u", "PROXY": "http://proxy:3128", "SOPS_AGE_KEY": "AGE-SECRET-KEY-1XYZ"}[k]
	}
	env := scriptEnv(p, "/run/kc", "/run/work/bundle.yaml", getenv)
	for _, want := range []string{"TGT_KUBECONFIG=/home/u/.airship/kubeconfig", "CONF=/srv/images/builder.yaml", "OTHER=/configuration",
		"PROXY=http://proxy:3128", "KUBECONFIG=/run/kc", "KCTL_CONTEXT=target-cluster", "RENDERED_BUNDLE_PATH=/run/work/bundle.yaml", "HOME=/home/u"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "UNSET=") || strings.HasPrefix(kv, "SOPS_AGE_KEY=") {
			t.Errorf("env has %s", kv)
		}
		if strings.HasPrefix(kv, "PATH=") && !strings.HasSuffix(kv, ":/usr/bin") {
			t.Errorf("PATH %s does not end in the caller's PATH", kv)
		}
	}
}
