// Command images builds the OCI images of the project's long-running
// binaries (see internal/image) without a container runtime: for each
// binary and platform a static build (CGO_ENABLED=0, -trimpath), then an
// image index written as an OCI layout under OUT/<name>/ and, for the
// machine's platform, a `docker load` tarball OUT/<name>.tar tagged
// localhost/airship/<name>:latest. `make images` runs it.
//
// With --push REGISTRY/REPOSITORY each image index is also pushed there as
// <name>:latest, and the kustomization names the pushed images.
//
// A push is bounded: --push-timeout (10m) for each image index, a minute
// for connecting and for each answer of the registry to come.
//
// Usage: images [--out bin/images] [--platforms linux/amd64,linux/arm64] [--binaries armada-operator,...] [--push REGISTRY/REPO] [--push-timeout 10m]
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
	insecure                               bool
	pushTimeout                            time.Duration
	ca                                     []byte
	revision, version                      string
}

func run(ctx context.Context) error {
	var o options
	flag.StringVar(&o.out, "out", "bin/images", "output directory")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	flag.StringVar(&o.binaries, "binaries", "armada-operator,metal3-operator,sip-operator,promenade", "comma-separated binaries of cmd/")
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
		if digests[name], err = buildImage(ctx, o, name, tmp); err != nil {
			return err
		}
	}
	return writeKustomization(o, digests)
}

// buildImage builds the image index of one binary for every platform,
// writes it as an OCI layout (and, for the machine's platform, a tarball),
// pushes it when asked, and returns its digest.
func buildImage(ctx context.Context, o options, name, tmp string) (v1.Hash, error) {
	start := time.Now()
	spec := image.Spec{Name: name, Binaries: map[string]string{}, CACertificates: o.ca,
		Source: o.source, Revision: o.revision, Version: o.version}
	for _, p := range strings.Split(o.platforms, ",") {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("--platforms %q: %w", p, err)
		}
		bin := filepath.Join(tmp, plat.OS+"-"+plat.Architecture, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/"+name)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+plat.OS, "GOARCH="+plat.Architecture)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return v1.Hash{}, fmt.Errorf("building %s for %s: %w", name, p, err)
		}
		spec.Binaries[p] = bin
	}
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
	line := fmt.Sprintf("%s: %s (%s)", name, digest, filepath.Join(o.out, name))
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
		if err := image.WriteTarball(tar, "localhost/airship/"+name+":latest", host, idx); err != nil {
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
