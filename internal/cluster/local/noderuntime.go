package local

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// kubeletClientUser is who the API server is when it calls a kubelet
// (logs, exec, port-forward): kubeletAPIAdmin lets it.
const (
	kubeletClientUser = "kube-apiserver-kubelet-client"
	kubeletAPIAdmin   = "system:kubelet-api-admin"
)

// grantNodeAccess binds the API server's kubelet client to Kubernetes'
// bootstrap role for the kubelet API. The kubelets themselves are
// authorized by the Node authorizer, kube-proxy by the bootstrap binding
// of system:node-proxier.
func grantNodeAccess(ctx context.Context, kubeconfig string) error {
	cs, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "airship:apiserver-kubelet-client", Labels: map[string]string{"app.kubernetes.io/managed-by": "airshipctl"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: kubeletAPIAdmin},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kubeletClientUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", b.Name, err)
	}
	return nil
}

// ImageArchiveSuffix names the OCI archives `make images` writes
// (bin/images/<name>.oci.tar), which the nodes import.
const ImageArchiveSuffix = ".oci.tar"

// importImages imports every OCI archive of dir into the node's containerd
// (namespace k8s.io, where the CRI plugin looks). Each archive names its
// image index twice (image.WriteArchive): name:latest and name@sha256:…,
// so a pod can pin the image by digest. checkRealNodes has read every
// archive and found the sandbox image among them.
func importImages(ctx context.Context, binDir string, n RealNode, dir string, progress io.Writer) error {
	archives, err := filepath.Glob(filepath.Join(dir, "*"+ImageArchiveSuffix))
	if err != nil {
		return err
	}
	ctr := func(args ...string) error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		full := append([]string{"--address", n.Socket(), "--namespace", "k8s.io"}, args...)
		out, err := exec.CommandContext(cctx, filepath.Join(binDir, "ctr"), full...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	t0 := time.Now()
	for _, a := range archives {
		if err := ctr("images", "import", "--platform", "linux/"+runtime.GOARCH, a); err != nil {
			return fmt.Errorf("importing %s: %w", a, err)
		}
	}
	progressf(progress, "imported %d images into %s (%.1fs)", len(archives), n.Name, time.Since(t0).Seconds())
	return nil
}

// archiveImage reads the name and digest of the image index an OCI
// archive holds (index.json's first manifest and its ref.name annotation).
func archiveImage(path string) (name, digest string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = f.Close() }() // only read
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", "", fmt.Errorf("%s: no index.json: not an OCI archive", path)
		}
		if err != nil {
			return "", "", fmt.Errorf("reading %s: %w", path, err)
		}
		if strings.TrimPrefix(h.Name, "./") != "index.json" {
			continue
		}
		var idx struct {
			Manifests []struct {
				Digest      string            `json:"digest"`
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&idx); err != nil {
			return "", "", fmt.Errorf("%s: index.json: %w", path, err)
		}
		if len(idx.Manifests) == 0 {
			return "", "", fmt.Errorf("%s: index.json lists no image", path)
		}
		m := idx.Manifests[0]
		name = m.Annotations["io.containerd.image.name"]
		if name == "" {
			name = m.Annotations["org.opencontainers.image.ref.name"]
		}
		if name == "" || !strings.HasPrefix(m.Digest, "sha256:") {
			return "", "", fmt.Errorf("%s: index.json's image has no name annotation or digest", path)
		}
		return name, m.Digest, nil
	}
}

// stopPodSandboxes stops and removes every pod sandbox of a node through
// its CRI socket, as the kubelet would: containers stop, CNI releases the
// pod's address and interfaces, network namespaces go. The kubelet has
// stopped first, so nothing starts them again.
func stopPodSandboxes(ctx context.Context, n RealNode) error {
	if _, err := os.Stat(n.Socket()); err != nil {
		return nil // containerd never started
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+n.Socket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connecting to %s's containerd: %w", n.Name, err)
	}
	defer func() { _ = conn.Close() }() // a local socket
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing %s's pods: %w", n.Name, err)
	}
	var errs []error
	for _, sb := range list.GetItems() {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod %s/%s on %s: %w", sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), n.Name, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s/%s on %s: %w", sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkRealNodes validates what real nodes need before anything starts.
func checkRealNodes(opts Options) error {
	if opts.RealNodes == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("--real-nodes needs root: a kubelet and containerd mount file systems, create cgroups and program the packet filter")
	}
	if missing := MissingNodeBinaries(opts.BinDir); len(missing) > 0 {
		return fmt.Errorf("real-node binaries missing from %s: %s; %s", opts.BinDir, strings.Join(missing, ", "), BuildHint)
	}
	pause := filepath.Join(opts.ImagesDir, "pause"+ImageArchiveSuffix)
	if opts.ImagesDir == "" {
		return fmt.Errorf("--real-nodes needs the images directory `make images` writes (--images), with the sandbox image %s", PauseImage)
	}
	if _, err := os.Stat(pause); err != nil {
		return fmt.Errorf("real nodes need the sandbox image %s: %w (run `make images`)", PauseImage, err)
	}
	for _, tool := range []string{"iptables", "ip6tables", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("real nodes need %s on PATH (hack/setup.sh installs it): %w", tool, err)
		}
	}
	archives, err := filepath.Glob(filepath.Join(opts.ImagesDir, "*"+ImageArchiveSuffix))
	if err != nil {
		return err
	}
	for _, a := range archives {
		name, _, err := archiveImage(a)
		if err != nil {
			return fmt.Errorf("--images: %w", err)
		}
		if a == pause && name != PauseImage {
			return fmt.Errorf("--images: %s names %s, not the sandbox image %s", a, name, PauseImage)
		}
	}
	return nil
}

// killLeftovers kills what could outlive containerd: a container shim
// serving one of the nodes' sockets, and any task still in a node's
// cgroup. After stopPodSandboxes there is normally none.
func killLeftovers(nodes []RealNode) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i, a := range args {
			if a == "-address" && i+1 < len(args) && ownSocket(args[i+1], nodes) {
				killPID(filepath.Base(filepath.Dir(f)))
				break
			}
		}
	}
	hier, _ := cgroupMounts()
	for _, n := range nodes {
		for _, h := range hier {
			_ = filepath.WalkDir(filepath.Join(h, n.CgroupRoot), func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
					return nil
				}
				b, _ := os.ReadFile(path)
				for _, pid := range strings.Fields(string(b)) {
					killPID(pid)
				}
				return nil
			})
		}
	}
}

func killPID(s string) {
	var pid int
	if _, err := fmt.Sscan(s, &pid); err == nil && pid > 1 && pid != os.Getpid() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func ownSocket(addr string, nodes []RealNode) bool {
	for _, n := range nodes {
		if strings.TrimPrefix(addr, "unix://") == n.Socket() {
			return true
		}
	}
	return false
}
