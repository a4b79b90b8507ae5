// Command images builds the OCI images of the project's long-running
// binaries (see internal/image) without a container runtime: for each
// binary and platform a static build (CGO_ENABLED=0, -trimpath), then an
// image index written as an OCI layout under OUT/<name>/ and, for the
// machine's platform, a `docker load` tarball OUT/<name>.tar tagged
// localhost/airship/<name>:latest. `make images` runs it.
//
// Among the binaries is pause (cmd/pause), the sandbox image of a kubelet
// node: /pause, run as 65535. With --haproxy (the default) it also builds
// the image of the installed HAProxy that SIP's load balancers run (see
// internal/image/haproxy), for this machine's platform only.
//
// Every image is also written as an OCI archive OUT/<name>.oci.tar that
// `ctr images import` takes: a tar of an OCI layout whose index.json lists
// the image index twice, named (annotations org.opencontainers.image.ref.name
// and io.containerd.image.name) localhost/airship/<name>:latest and
// localhost/airship/<name>@<digest of the index>. `ctr -n k8s.io images
// import OUT/<name>.oci.tar` (no --base-name) stores the image under both
// names, so a pod naming either the tag or the digest of
// OUT/kustomization.yaml finds it without a pull.
//
// With --push REGISTRY/REPOSITORY each image index is also pushed there as
// <name>:latest, and the kustomization names the pushed images.
//
// A push is bounded: --push-timeout (10m) for each image index, a minute
// for connecting and for each answer of the registry to come.
//
// Usage: images [--out bin/images] [--platforms linux/amd64,linux/arm64] [--binaries armada-operator,...] [--haproxy=true] [--push REGISTRY/REPO] [--push-timeout 10m]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/airshipit/airship-go/internal/image"
	"github.com/airshipit/airship-go/internal/image/haproxy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// options are the command's flags, and what every image is labelled with.
type options struct {
	out, platforms, binaries, source, push string
	insecure, haproxy                      bool
	pushTimeout                            time.Duration
	ca                                     []byte
	revision, version                      string
}

func run(ctx context.Context) error {
	var o options
	flag.StringVar(&o.out, "out", "bin/images", "output directory")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	flag.StringVar(&o.binaries, "binaries", "armada-operator,metal3-operator,sip-operator,promenade,pause", "comma-separated binaries of cmd/")
	flag.BoolVar(&o.haproxy, "haproxy", true, "build the image of the installed HAProxy too (for this machine's platform only)")
	flag.StringVar(&o.source, "source", "https://github.com/airshipit/airship-go", "the org.opencontainers.image.source label")
	flag.StringVar(&o.push, "push", "", "registry and repository to push to, e.g. registry.example:5000/airship (credentials from the Docker config)")
	flag.BoolVar(&o.insecure, "insecure-registry", false, "push over plain HTTP")
	flag.DurationVar(&o.pushTimeout, "push-timeout", image.DefaultPushTimeout, "time limit of pushing one image index")
	caFile := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to install in the images")
	flag.Parse()
	var err error
	o.ca, err = os.ReadFile(*caFile)
	if err != nil {
		return fmt.Errorf("reading the CA bundle: %w (install ca-certificates or pass --ca-certificates)", err)
	}
	o.revision = gitOutput(ctx, "rev-parse", "HEAD")
	o.version = gitOutput(ctx, "describe", "--tags", "--always", "--dirty")
	tmp, err := os.MkdirTemp("", "airship-images-")
	if err != nil {
		return err
	}
	defer func() {
		if err := os.RemoveAll(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "images: removing the build directory:", err)
		}
	}()
	digests := map[string]v1.Hash{}
	for _, name := range strings.Split(o.binaries, ",") {
		spec, err := binarySpec(ctx, o, name, tmp)
		if err != nil {
			return err
		}
		if digests[name], err = writeImage(ctx, o, spec); err != nil {
			return err
		}
	}
	if o.haproxy {
		if digests[haproxy.Name], err = buildHAProxy(ctx, o); err != nil {
			return err
		}
	}
	return writeKustomization(o, digests)
}

// pause is the sandbox image's binary, which kubelet's own sandbox image
// runs as /pause and as 65535.
const (
	pause    = "pause"
	pauseUID = 65535
)

// baseSpec is what every image is labelled with.
func baseSpec(o options, name string) image.Spec {
	return image.Spec{Name: name, Binaries: map[string]string{}, CACertificates: o.ca,
		Source: o.source, Revision: o.revision, Version: o.version}
}

// binarySpec builds one binary of cmd/ for every platform and describes
// its image.
func binarySpec(ctx context.Context, o options, name, tmp string) (image.Spec, error) {
	spec := baseSpec(o, name)
	if name == pause {
		spec.Path, spec.UID, spec.UserName = "/"+pause, pauseUID, pause
	}
	for _, p := range strings.Split(o.platforms, ",") {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return image.Spec{}, fmt.Errorf("--platforms %q: %w", p, err)
		}
		bin := filepath.Join(tmp, plat.OS+"-"+plat.Architecture, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/"+name)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+plat.OS, "GOARCH="+plat.Architecture)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return image.Spec{}, fmt.Errorf("building %s for %s: %w", name, p, err)
		}
		spec.Binaries[p] = bin
	}
	return spec, nil
}

// buildHAProxy writes the image of the installed HAProxy, for this
// machine's platform whatever --platforms says.
func buildHAProxy(ctx context.Context, o options) (v1.Hash, error) {
	spec, err := haproxy.Spec(ctx, baseSpec(o, haproxy.Name))
	if err != nil {
		return v1.Hash{}, err
	}
	var skipped []string
	for _, p := range strings.Split(o.platforms, ",") {
		if p != haproxy.Platform {
			skipped = append(skipped, p)
		}
	}
	if len(skipped) > 0 {
		fmt.Printf("%s: only for %s, from the installed Debian package %s; not for %s\n", haproxy.Name, haproxy.Platform, haproxy.Package, strings.Join(skipped, ", "))
	}
	return writeImage(ctx, o, spec)
}

// writeImage builds the image index of spec, writes it as an OCI layout
// and an OCI archive (and, for the machine's platform, a tarball), pushes
// it when asked, and returns its digest.
func writeImage(ctx context.Context, o options, spec image.Spec) (v1.Hash, error) {
	start := time.Now()
	name := spec.Name
	idx, err := image.Build(spec)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := image.WriteLayout(filepath.Join(o.out, name), idx); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the layout of %s: %w", name, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	archive := filepath.Join(o.out, name+".oci.tar")
	if err := image.WriteArchive(archive, idx, image.RefName(name), "localhost/airship/"+name+"@"+digest.String()); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI archive of %s: %w", name, err)
	}
	line := fmt.Sprintf("%s: %s (%s, %s)", name, digest, filepath.Join(o.out, name), archive)
	if o.push != "" {
		ref := strings.TrimSuffix(o.push, "/") + "/" + name + ":latest"
		if _, err := image.Push(ctx, ref, idx, image.PushOptions{Insecure: o.insecure, Timeout: o.pushTimeout}); err != nil {
			return v1.Hash{}, err
		}
		line += ", pushed to " + ref
	}
	host := "linux/" + runtime.GOARCH
	if _, ok := spec.Binaries[host]; ok {
		tar := filepath.Join(o.out, name+".tar")
		if err := image.WriteTarball(tar, image.RefName(name), host, idx); err != nil {
			return v1.Hash{}, fmt.Errorf("writing the tarball of %s: %w", name, err)
		}
		line += ", " + tar
	}
	fmt.Printf("%s in %s\n", line, time.Since(start).Round(time.Second))
	return digest, nil
}

// writeKustomization writes an install of config/default with these
// images, by digest.
func writeKustomization(o options, digests map[string]v1.Hash) error {
	abs, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	cfg, err := filepath.Abs("config/default")
	if err != nil {
		return err
	}
	base, err := filepath.Rel(abs, cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "kustomization.yaml"), image.KustomizationAt(filepath.ToSlash(base), o.push, digests), 0o644); err != nil {
		return err
	}
	fmt.Printf("kubectl apply -k %s installs them (config/default with these digests)\n", o.out)
	return nil
}

func gitOutput(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
