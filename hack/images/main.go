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

func run(ctx context.Context) error {
	out := flag.String("out", "bin/images", "output directory")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	binaries := flag.String("binaries", "armada-operator,metal3-operator,sip-operator,promenade", "comma-separated binaries of cmd/")
	source := flag.String("source", "https://github.com/airshipit/airship-go", "the org.opencontainers.image.source label")
	push := flag.String("push", "", "registry and repository to push to, e.g. registry.example:5000/airship (credentials from the Docker config)")
	insecure := flag.Bool("insecure-registry", false, "push over plain HTTP")
	pushTimeout := flag.Duration("push-timeout", image.DefaultPushTimeout, "time limit of pushing one image index")
	caFile := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to install in the images")
	flag.Parse()
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		return fmt.Errorf("reading the CA bundle: %w (install ca-certificates or pass --ca-certificates)", err)
	}
	revision := gitOutput(ctx, "rev-parse", "HEAD")
	version := gitOutput(ctx, "describe", "--tags", "--always", "--dirty")
	tmp, err := os.MkdirTemp("", "airship-images-")
	if err != nil {
		return err
	}
	defer func() {
		if err := os.RemoveAll(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "images: removing the build directory:", err)
		}
	}()
	host := "linux/" + runtime.GOARCH
	digests := map[string]v1.Hash{}
	for _, name := range strings.Split(*binaries, ",") {
		start := time.Now()
		spec := image.Spec{Name: name, Binaries: map[string]string{}, CACertificates: ca,
			Source: *source, Revision: revision, Version: version}
		for _, p := range strings.Split(*platforms, ",") {
			plat, err := v1.ParsePlatform(p)
			if err != nil {
				return fmt.Errorf("--platforms %q: %w", p, err)
			}
			bin := filepath.Join(tmp, plat.OS+"-"+plat.Architecture, name)
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/"+name)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+plat.OS, "GOARCH="+plat.Architecture)
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("building %s for %s: %w", name, p, err)
			}
			spec.Binaries[p] = bin
		}
		idx, err := image.Build(spec)
		if err != nil {
			return err
		}
		if err := image.WriteLayout(filepath.Join(*out, name), idx); err != nil {
			return fmt.Errorf("writing the layout of %s: %w", name, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		digests[name] = digest
		line := fmt.Sprintf("%s: %s (%s)", name, digest, filepath.Join(*out, name))
		if *push != "" {
			ref := strings.TrimSuffix(*push, "/") + "/" + name + ":latest"
			if _, err := image.Push(ctx, ref, idx, image.PushOptions{Insecure: *insecure, Timeout: *pushTimeout}); err != nil {
				return err
			}
			line += ", pushed to " + ref
		}
		if _, ok := spec.Binaries[host]; ok {
			tar := filepath.Join(*out, name+".tar")
			if err := image.WriteTarball(tar, "localhost/airship/"+name+":latest", host, idx); err != nil {
				return fmt.Errorf("writing the tarball of %s: %w", name, err)
			}
			line += ", " + tar
		}
		fmt.Printf("%s in %s\n", line, time.Since(start).Round(time.Second))
	}
	// An install of config/default with these images, by digest.
	abs, err := filepath.Abs(*out)
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
	if err := os.WriteFile(filepath.Join(*out, "kustomization.yaml"), image.KustomizationAt(filepath.ToSlash(base), *push, digests), 0o644); err != nil {
		return err
	}
	fmt.Printf("kubectl apply -k %s installs them (config/default with these digests)\n", *out)
	return nil
}

func gitOutput(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
