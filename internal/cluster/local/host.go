package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
)

// Real nodes change the host: the kubelet sets kernel tunables, kube-proxy
// and the CNI plugins add iptables chains, the bridge plugin turns on IP
// forwarding, containerd and the kubelet mount file systems, runc creates
// cgroups. Up records what it will touch before the first change
// (hostSnapshot) and Down puts it back (restoreHost), so a host is left as
// it was found. The test TestRealNodeLeavesHostClean compares the two.

// hostSysctls are the kernel parameters a real node may change: the
// kubelet's tunables, forwarding (the bridge plugin, kube-proxy), and the
// ones kube-proxy would set if its configuration let it.
var hostSysctls = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward",
	"net.ipv4.conf.all.forwarding",
	"net.ipv4.conf.all.route_localnet",
	"net.ipv6.conf.all.forwarding",
	"net.bridge.bridge-nf-call-iptables",
	"net.bridge.bridge-nf-call-ip6tables",
	"net.netfilter.nf_conntrack_max",
}

// ownedChainPrefixes name the iptables chains the kubelet, kube-proxy and
// the CNI plugins create.
var ownedChainPrefixes = []string{"KUBE-", "CNI-", apiServerGuard}

// apiServerGuard is the chain that keeps the API server, which binds every
// address when real nodes run, to loopback and the nodes' bridge.
const apiServerGuard = "AIRSHIP-APISERVER"

// hostSnapshot is the host's state before real nodes started.
type hostSnapshot struct {
	// Sysctls holds each readable parameter's value.
	Sysctls map[string]string `json:"sysctls"`
	// Chains lists, per "iptables/<table>" (or ip6tables), the owned
	// chains that existed already: Down leaves those alone.
	Chains map[string][]string `json:"chains"`
	// Tables lists, per command, the tables that existed: an nftables
	// backed iptables creates a table on first use, and Down deletes the
	// ones it created when they are empty again.
	Tables map[string][]string `json:"tables"`
	// Absent lists the host paths of hostPaths that did not exist.
	Absent []string `json:"absent"`
}

// hostPaths are directories outside the state directory that a node's
// programs create whatever they are told: containerd's shims put their
// sockets in /run/containerd/s (fixed for root). Down removes the ones it
// created, once empty.
var hostPaths = []string{nodeRoot, "/run/containerd/s", "/run/containerd", "/var/lib/cni", "/run/netns", "/var/run/nri", "/opt/containerd", "/var/lib/kubelet"}

func (p paths) hostSnapshot() string { return filepath.Join(p.root, "nodes", "host-before.json") }

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

func readSysctls() map[string]string {
	out := map[string]string{}
	for _, s := range hostSysctls {
		if b, err := os.ReadFile(sysctlPath(s)); err == nil {
			out[s] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// iptablesTables are the tables kube-proxy, the kubelet and CNI write.
var iptablesTables = []string{"filter", "nat", "mangle"}

// ownedChains lists the chains of one table that carry an owned prefix.
func ownedChains(ctx context.Context, cmd, table string) ([]string, error) {
	out, err := exec.CommandContext(ctx, cmd, "-w", "5", "-t", table, "-S").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -t %s -S: %w", cmd, table, exitDetail(err))
	}
	var chains []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "-N" && hasOwnedPrefix(f[1]) {
			chains = append(chains, f[1])
		}
	}
	return chains, nil
}

func hasOwnedPrefix(chain string) bool {
	for _, p := range ownedChainPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

func exitDetail(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// takeHostSnapshot records the host before real nodes change it. It
// refuses a host where another cluster's real nodes run (the bridge exists).
func takeHostSnapshot(ctx context.Context, p paths) error {
	if _, err := net.InterfaceByName(nodeBridge); err == nil {
		return fmt.Errorf("the network bridge %s exists: another local cluster with real nodes runs on this host (one per host: they share the host's packet filter); stop it first with `airshipctl cluster local down`, or remove the bridge (ip link del %s)", nodeBridge, nodeBridge)
	}
	for _, tool := range []string{"iptables", "ip6tables", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("real nodes need %s on PATH (hack/setup.sh installs it): %w", tool, err)
		}
	}
	snap := hostSnapshot{Sysctls: readSysctls(), Chains: map[string][]string{}, Tables: map[string][]string{}}
	for _, path := range hostPaths {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			snap.Absent = append(snap.Absent, path)
		}
	}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		tables, err := iptablesTablesPresent(ctx, cmd)
		if err != nil {
			return err
		}
		snap.Tables[cmd] = tables
		for _, t := range iptablesTables {
			chains, err := ownedChains(ctx, cmd, t)
			if err != nil {
				return err
			}
			snap.Chains[cmd+"/"+t] = chains
		}
	}
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.hostSnapshot()), 0o700); err != nil {
		return err
	}
	// Kept when it exists: an earlier Up that failed half-way wrote it
	// before its first change, and its values are the host's own.
	if _, err := os.Stat(p.hostSnapshot()); err == nil {
		return nil
	}
	return fileutil.WriteAtomic(p.hostSnapshot(), data, 0o600)
}

// iptablesTablesPresent lists the tables cmd-save prints (those that exist).
func iptablesTablesPresent(ctx context.Context, cmd string) ([]string, error) {
	out, err := exec.CommandContext(ctx, cmd+"-save").Output()
	if err != nil {
		return nil, fmt.Errorf("%s-save: %w", cmd, exitDetail(err))
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if t, ok := strings.CutPrefix(line, "*"); ok {
			tables = append(tables, t)
		}
	}
	return tables, nil
}

// removeCreatedTables deletes, where iptables is backed by nftables, the
// tables that did not exist before and hold no rule and no chain of their
// own now (only the built-in chains with an ACCEPT policy).
func removeCreatedTables(ctx context.Context, before map[string][]string) error {
	var errs []error
	for cmd, family := range map[string]string{"iptables": "ip", "ip6tables": "ip6"} {
		v, err := exec.CommandContext(ctx, cmd, "-V").Output()
		if err != nil || !strings.Contains(string(v), "nf_tables") {
			continue
		}
		now, err := iptablesTablesPresent(ctx, cmd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range now {
			if slices.Contains(before[cmd], t) {
				continue
			}
			out, err := exec.CommandContext(ctx, cmd, "-w", "5", "-t", t, "-S").Output()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s -t %s -S: %w", cmd, t, exitDetail(err)))
				continue
			}
			if !onlyDefaultChains(string(out)) {
				continue // someone else's rules: not ours to delete
			}
			if o, err := exec.CommandContext(ctx, "nft", "delete", "table", family, t).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("nft delete table %s %s: %w: %s", family, t, err, strings.TrimSpace(string(o))))
			}
		}
	}
	return errors.Join(errs...)
}

// onlyDefaultChains reports whether iptables -S output holds nothing but
// built-in chains with an ACCEPT policy.
func onlyDefaultChains(out string) bool {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "-P" || f[2] != "ACCEPT" {
			return false
		}
	}
	return true
}

// createBridge creates nodeBridge with the gateway address, up.
func createBridge(ctx context.Context) error {
	steps := [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", nodeGateway, nodePrefix), "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, "ip", s...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// guardAPIServer makes the API server's port answer only on loopback and
// the nodes' bridge (IPv4 and IPv6): elsewhere a connection is reset at
// once. Down removes the chain with the other owned ones.
func guardAPIServer(ctx context.Context, port int) error {
	for _, cmd := range []string{"iptables", "ip6tables"} {
		steps := [][]string{
			{"-N", apiServerGuard},
			{"-A", apiServerGuard, "-i", "lo", "-j", "RETURN"},
			{"-A", apiServerGuard, "-i", nodeBridge, "-j", "RETURN"},
			{"-A", apiServerGuard, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
			{"-I", "INPUT", "-p", "tcp", "--dport", strconv.Itoa(port), "-j", apiServerGuard},
		}
		for _, st := range steps {
			args := append([]string{"-w", "5", "-t", "filter"}, st...)
			if out, err := exec.CommandContext(ctx, cmd, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}

// addNodeAddress gives a node its own address on the bridge.
func addNodeAddress(ip string) error {
	out, err := exec.Command("ip", "addr", "add", ip+"/32", "dev", nodeBridge).CombinedOutput() //nolint:noctx // a local netlink change that cannot hang
	if err != nil && !strings.Contains(string(out), "File exists") {
		return fmt.Errorf("ip addr add %s/32 dev %s: %w: %s", ip, nodeBridge, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// cgroupMounts lists the mount points of the host's cgroup hierarchies
// (v1: one per controller set; v2: the unified one).
func cgroupMounts() ([]string, error) {
	mounts, err := readMountinfo()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			out = append(out, m.point)
		}
	}
	return out, nil
}

// createCgroup creates a node's cgroup root in every hierarchy (the
// kubelet requires it to exist). cpuset needs its CPUs and memory nodes
// before a task can join: they are copied from the parent.
func createCgroup(root string) error {
	hier, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, h := range hier {
		dir := filepath.Join(h, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("setting %s of cgroup %s: %w", f, dir, err)
			}
		}
	}
	return nil
}

// removeCgroup removes a node's cgroup tree in every hierarchy, children
// first. A cgroup with tasks cannot be removed: the caller has stopped them.
func removeCgroup(root string) error {
	hier, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hier {
		top := filepath.Join(h, root)
		var dirs []string
		_ = filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := rmdirRetry(dirs[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// rmdirRetry removes a cgroup directory, waiting a little for the kernel
// to let go of tasks that just exited.
func rmdirRetry(dir string) error {
	var err error
	for range 50 {
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

type mountEntry struct{ point, fstype string }

func readMountinfo() ([]mountEntry, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []mountEntry
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		out = append(out, mountEntry{point: unescapeMount(f[4]), fstype: f[sep+1]})
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountUnder detaches every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	var errs []error
	for range 3 { // a detach can reveal a mount stacked below it
		mounts, err := readMountinfo()
		if err != nil {
			return err
		}
		var under []string
		for _, m := range mounts {
			if m.point == dir || strings.HasPrefix(m.point, dir+"/") {
				under = append(under, m.point)
			}
		}
		if len(under) == 0 {
			return nil
		}
		sort.Slice(under, func(i, j int) bool { return len(under[i]) > len(under[j]) })
		errs = errs[:0]
		for _, m := range under {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
			}
		}
	}
	return errors.Join(errs...)
}

// removeOwnedChains deletes the owned chains that were not there before
// (snapshot), after deleting every rule that jumps to one of them.
func removeOwnedChains(ctx context.Context, before map[string][]string) error {
	var errs []error
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, t := range iptablesTables {
			now, err := ownedChains(ctx, cmd, t)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			var ours []string
			for _, c := range now {
				if !slices.Contains(before[cmd+"/"+t], c) {
					ours = append(ours, c)
				}
			}
			if len(ours) == 0 {
				continue
			}
			errs = append(errs, deleteChains(ctx, cmd, t, ours))
		}
	}
	return errors.Join(errs...)
}

func deleteChains(ctx context.Context, cmd, table string, chains []string) error {
	out, err := exec.CommandContext(ctx, cmd, "-w", "5", "-t", table, "-S").Output()
	if err != nil {
		return fmt.Errorf("%s -t %s -S: %w", cmd, table, exitDetail(err))
	}
	run := func(args ...string) error {
		full := append([]string{"-w", "5", "-t", table}, args...)
		if o, err := exec.CommandContext(ctx, cmd, full...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w: %s", cmd, strings.Join(full, " "), err, strings.TrimSpace(string(o)))
		}
		return nil
	}
	var errs []error
	// Rules in other chains that jump to ours.
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "-A" || slices.Contains(chains, f[1]) {
			continue
		}
		if j := slices.Index(f, "-j"); j >= 0 && j+1 < len(f) && slices.Contains(chains, f[j+1]) {
			// -S quotes comments the way the shell would; splitting on
			// spaces keeps the words, which is what -D needs once unquoted.
			args := append([]string{"-D"}, unquoteRule(sc.Text())[1:]...)
			errs = append(errs, run(args...))
		}
	}
	for _, c := range chains {
		errs = append(errs, run("-F", c))
	}
	for _, c := range chains {
		errs = append(errs, run("-X", c))
	}
	return errors.Join(errs...)
}

// unquoteRule splits one line of iptables -S into its words, honouring
// double quotes (comments) as iptables prints them.
func unquoteRule(line string) []string {
	var words []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '"':
			inQuote = !inQuote
			have = true
		case c == ' ' && !inQuote:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// restoreHost undoes what real nodes changed, after every node process
// and container is gone: mounts under the state directory, the owned
// iptables chains, the bridge (and with it the node addresses), the nodes'
// cgroups and the kernel parameters.
func restoreHost(ctx context.Context, p paths, nodes []RealNode) error {
	var snap hostSnapshot
	data, err := os.ReadFile(p.hostSnapshot())
	if err != nil {
		return fmt.Errorf("reading the host's state before the real nodes (%s): %w", p.hostSnapshot(), err)
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		return fmt.Errorf("reading %s: %w", p.hostSnapshot(), err)
	}
	var errs []error
	errs = append(errs, unmountUnder(p.root))
	errs = append(errs, removeOwnedChains(ctx, snap.Chains))
	if _, err := net.InterfaceByName(nodeBridge); err == nil {
		if out, err := exec.CommandContext(ctx, "ip", "link", "del", nodeBridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link del %s: %w: %s", nodeBridge, err, strings.TrimSpace(string(out))))
		}
	}
	for _, n := range nodes {
		errs = append(errs, removeCgroup(n.CgroupRoot))
	}
	errs = append(errs, removeCreatedTables(ctx, snap.Tables))
	for _, n := range nodes {
		// Its own directory, named by the state directory's hash: once
		// nothing is mounted below it, it goes with what it holds.
		if strings.HasPrefix(n.Dir, nodeRoot+"/") {
			if err := unmountUnder(n.Dir); err != nil {
				errs = append(errs, err)
			} else {
				errs = append(errs, os.RemoveAll(n.Dir))
			}
		}
	}
	for _, path := range snap.Absent {
		// Empty once the shims and pods are gone; a non-empty one is
		// reported, never emptied: it may be another program's now.
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s, which real nodes created: %w", path, err))
		}
	}
	now := readSysctls()
	for name, v := range snap.Sysctls {
		if now[name] != v {
			if err := os.WriteFile(sysctlPath(name), []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring %s to %s: %w", name, v, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(p.hostSnapshot())
}

// hostLockPath is the lock real-node clusters of one host take turns on.
const hostLockPath = "/run/airship-real-nodes.lock"

// LockRealNodeHost waits until no other holder of the host's real-node
// lock is left and takes it, for a caller that brings a real-node cluster
// up and down while it lives (tests running in parallel: one real-node
// cluster per host). The lock goes with the process that holds it.
func LockRealNodeHost(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(hostLockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", hostLockPath, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close() // a lock file: no data in it
			return nil, fmt.Errorf("locking %s: %w", hostLockPath, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close() // a lock file: no data in it
			return nil, fmt.Errorf("waiting for the other real-node cluster of this host (%s): %w", hostLockPath, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close() // a lock file: no data in it
	}, nil
}
