// Command kubenode makes the test machine a real Kubernetes node for as long as it runs: containerd (Debian's, with
// runc) runs the pods, a kubelet registers the machine with the API server, kube-proxy (nftables mode) gives pods the
// kubernetes Service. RealNode (simulator/cluster) starts it; it is test tooling, never installed on a cluster.
//
//	kubenode --work DIR --bin DIR --node-name NAME --kubelet-kubeconfig FILE --proxy-kubeconfig FILE --client-ca FILE
//	         [--label k=v]... [--image FILE=NAME]... [--driver-base FILE] [--lock-wait DURATION]
//
// Everything it starts it stops, and everything it changes it undoes, on SIGTERM, SIGINT, SIGHUP, when its parent
// dies (the JVM that started it, even after SIGKILL) or when one of its servers exits:
//   - state under DIR: containerd's root and state (netns mounts included), the kubelet's root and certificates, pod
//     logs, the CNI configuration and IP allocations;
//   - the bridge npul0 (10.244.0.1/24, the node's address: pods reach it on their own subnet) and the veths on it;
//   - the nftables tables of kube-proxy (ip and ip6 "kube-proxy");
//   - the cgroups under /npu-lifecycle-node in every cgroup v1 hierarchy (the kubelet's cgroupRoot) and, on a hybrid
//     machine, in the cgroup v2 tree (runc makes the pods' cgroups there too);
//   - the processes of the pods, containerd's shims, containerd, the kubelet and kube-proxy;
//   - every mount under DIR, and /run/containerd, /var/lib/kubelet and /var/log/pods when they did not exist before.
//
// One node at a time on a machine (a lock in /run/lock; --lock-wait waits for it, e.g. 15m); the file /run/npu-lifecycle-kubenode.state names the
// running node's work folder, so a kubenode killed with SIGKILL is cleaned up by the next start.
//
// Output: "kubenode: network ready address=<ip>" once the bridge has the node's address (kube-apiserver can bind
// to it now); then kubenode starts containerd, imports the images and waits for the two kubeconfig files to exist
// (the caller writes them once kube-apiserver runs); "kubenode: ready node=<name> address=<ip> containerd=<socket>"
// once the kubelet and kube-proxy run; errors as "kubenode: ..." lines. Exit codes: 0 stopped by a signal, 1 a server exited or a step failed, 2 usage (a bad
// flag; a work folder that is not new, empty or kubenode's; not root), 3 the parent died, 4 another node runs on
// this machine, 5 a tool is missing and cannot be installed.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Fixed facts of the one node a machine runs.
const (
	Bridge      = "npul0"
	NodeAddress = "10.244.0.1"
	PodCIDR     = "10.244.0.0/24"
	CgroupRoot  = "/npu-lifecycle-node"
	LockFile    = "/run/lock/npu-lifecycle-kubenode.lock"
	StateFile   = "/run/npu-lifecycle-kubenode.state"
	PauseImage  = "localhost/npu-lifecycle/pause:3.10"
	DriverImage = "localhost/npu-lifecycle/simulated-driver:latest"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// Options are the command line.
type Options struct {
	Work, Bin, NodeName, KubeletKubeconfig, ProxyKubeconfig, ClientCA, DriverBase string
	Labels, Images                                                                multi
	LockWait                                                                      time.Duration
}

func main() {
	var o Options
	fs := flag.NewFlagSet("kubenode", flag.ContinueOnError)
	fs.StringVar(&o.Work, "work", "", "work folder (created); all state lives under it")
	fs.StringVar(&o.Bin, "bin", "", "folder of kubelet, kube-proxy and pause")
	fs.StringVar(&o.NodeName, "node-name", "", "the node's name")
	fs.StringVar(&o.KubeletKubeconfig, "kubelet-kubeconfig", "", "the kubelet's kubeconfig (user system:node:<name>)")
	fs.StringVar(&o.ProxyKubeconfig, "proxy-kubeconfig", "", "kube-proxy's kubeconfig (user system:kube-proxy)")
	fs.StringVar(&o.ClientCA, "client-ca", "", "CA of the clients the kubelet accepts (kube-apiserver's)")
	fs.StringVar(&o.DriverBase, "driver-base", "", "an OCI archive of one platform: the simulated driver image is it plus /driver")
	fs.DurationVar(&o.LockWait, "lock-wait", 0, "how long to wait for another node of this machine to stop (0: fail at once)")
	fs.Var(&o.Labels, "label", "a node label key=value (repeatable)")
	fs.Var(&o.Images, "image", "FILE=NAME: import the OCI archive FILE as NAME:<its tag> (repeatable)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	for name, v := range map[string]string{"--work": o.Work, "--bin": o.Bin, "--node-name": o.NodeName,
		"--kubelet-kubeconfig": o.KubeletKubeconfig, "--proxy-kubeconfig": o.ProxyKubeconfig, "--client-ca": o.ClientCA} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "kubenode: %s is required\n", name)
			os.Exit(2)
		}
	}
	work, err := checkWork(o.Work)
	if err != nil {
		fail(2, "--work %s: %v", o.Work, err)
	}
	o.Work = work
	for _, spec := range o.Images {
		if file, name, ok := strings.Cut(spec, "="); !ok || file == "" || name == "" {
			fail(2, "--image %q: expected FILE=NAME (an OCI archive and the image name without its tag)", spec)
		}
	}
	if o.LockWait < 0 {
		fail(2, "--lock-wait %v: expected a duration of 0 or more", o.LockWait)
	}
	os.Exit(run(o))
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kubenode: "+format+"\n", args...)
	os.Exit(code)
}

func logf(format string, args ...any) {
	fmt.Printf("kubenode: "+format+"\n", args...)
}

func run(o Options) int {
	// from the very start: a signal or the death of the process that started kubenode stops it, during the lock
	// wait and the package install too (the JVM may die in any of them)
	parent := os.Getppid()
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range time.Tick(time.Second) {
			if parent > 1 && os.Getppid() != parent {
				fmt.Fprintln(os.Stderr, "kubenode: the process that started this node is gone: stopping the node")
				signals <- syscall.SIGTERM
				return
			}
		}
	}()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "kubenode: a kubelet and containerd need root (they create cgroups, mounts and network namespaces)")
		return 2
	}
	lock, err := acquireLock(o.Work)
	if err != nil && o.LockWait > 0 {
		logf("waiting up to %v: %v", o.LockWait, err)
	}
	for deadline := time.Now().Add(o.LockWait); err != nil && time.Now().Before(deadline); {
		select {
		case s := <-signals:
			fmt.Fprintf(os.Stderr, "kubenode: %v while waiting for the machine's node lock\n", s)
			return 1
		case <-time.After(500 * time.Millisecond):
		}
		lock, err = acquireLock(o.Work)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubenode:", err)
		return 4
	}
	defer lock.Close()
	// a node killed with SIGKILL left its state: undo it first
	if prev, err := readState(); err == nil {
		logf("cleaning up after the previous node (work folder %s)", prev.Work)
		teardown(prev, nil)
	}
	if err := ensureTools(); err != nil {
		fmt.Fprintln(os.Stderr, "kubenode:", err)
		return 5
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "kubenode: cannot create", o.Work+":", err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(o.Work, WorkMarker), []byte("a kubenode work folder\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "kubenode: cannot write", filepath.Join(o.Work, WorkMarker)+":", err)
		return 1
	}
	st := newState(o.Work)
	if err := writeState(st); err != nil {
		fmt.Fprintln(os.Stderr, "kubenode: cannot write", StateFile+":", err)
		return 1
	}
	procs := &servers{}
	code := func() int {
		if err := start(o, st, procs, signals); err != nil {
			fmt.Fprintln(os.Stderr, "kubenode:", err)
			return 1
		}
		logf("ready node=%s address=%s containerd=%s", o.NodeName, NodeAddress, containerdSocket(o.Work))
		for {
			select {
			case s := <-signals:
				logf("%v: stopping the node", s)
				if parent > 1 && os.Getppid() != parent {
					return 3
				}
				return 0
			case e := <-procs.exited:
				fmt.Fprintf(os.Stderr, "kubenode: %s exited (%v); its log: %s\n", e.name, e.err, e.log)
				return 1
			}
		}
	}()
	teardown(st, procs)
	return code
}

// start brings the node up: network, containerd, images, kubelet, kube-proxy.
func start(o Options, st *State, procs *servers, signals chan os.Signal) error {
	for _, d := range []string{"logs", "cni/conf", "cni/ipam", "containerd/root", "containerd/state", "kubelet/root",
		"kubelet/pki", "kubelet/pods-logs", "kube-proxy"} {
		if err := os.MkdirAll(filepath.Join(o.Work, d), 0o755); err != nil {
			return err
		}
	}
	if err := createBridge(); err != nil {
		return err
	}
	logf("network ready address=%s", NodeAddress)
	if err := createCgroupRoot(); err != nil {
		return err
	}
	if err := writeConfigs(o); err != nil {
		return err
	}
	if err := procs.start("containerd", filepath.Join(o.Work, "logs/containerd.log"), "containerd",
		"--config", filepath.Join(o.Work, "containerd/config.toml")); err != nil {
		return err
	}
	if err := waitForSocket(containerdSocket(o.Work), 30*time.Second); err != nil {
		return fmt.Errorf("containerd did not answer: %v (log: %s)", err, filepath.Join(o.Work, "logs/containerd.log"))
	}
	if err := importImages(o); err != nil {
		return err
	}
	if err := waitForFiles([]string{o.KubeletKubeconfig, o.ProxyKubeconfig}, 10*time.Minute, signals); err != nil {
		return err
	}
	kubeletArgs := []string{"--config=" + filepath.Join(o.Work, "kubelet/config.yaml"),
		"--kubeconfig=" + o.KubeletKubeconfig, "--root-dir=" + filepath.Join(o.Work, "kubelet/root"),
		"--cert-dir=" + filepath.Join(o.Work, "kubelet/pki"), "--hostname-override=" + o.NodeName,
		"--node-ip=" + NodeAddress, "--v=1"}
	if len(o.Labels) > 0 {
		kubeletArgs = append(kubeletArgs, "--node-labels="+strings.Join(o.Labels, ","))
	}
	if err := procs.start("kubelet", filepath.Join(o.Work, "logs/kubelet.log"), filepath.Join(o.Bin, "kubelet"),
		kubeletArgs...); err != nil {
		return err
	}
	return procs.start("kube-proxy", filepath.Join(o.Work, "logs/kube-proxy.log"), filepath.Join(o.Bin, "kube-proxy"),
		"--config="+filepath.Join(o.Work, "kube-proxy/config.yaml"), "--v=1")
}

// waitForFiles waits until every file exists (the caller writes them once kube-apiserver runs).
func waitForFiles(files []string, timeout time.Duration, signals chan os.Signal) error {
	deadline := time.Now().Add(timeout)
	parent := os.Getppid()
	for {
		missing := ""
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				missing = f
				break
			}
		}
		if missing == "" {
			return nil
		}
		select {
		case s := <-signals:
			return fmt.Errorf("%v while waiting for %s", s, missing)
		case <-time.After(100 * time.Millisecond):
		}
		if parent > 1 && os.Getppid() != parent {
			return fmt.Errorf("the process that started this node is gone")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %v", missing, timeout)
		}
	}
}

// WorkMarker is the file kubenode writes into a work folder it uses: a later start (and the clean-up after a
// SIGKILLed node) accepts only a folder that is new, empty or marked so, never one holding anything else.
const WorkMarker = ".npu-lifecycle-kubenode"

// checkWork returns the canonical work folder: absolute, symbolic links resolved (the kernel records mounts under
// the resolved path), at least two levels below /, and new, empty or marked by an earlier kubenode. Teardown
// unmounts everything under it: "/" or "/tmp" would take the machine's own mounts.
func checkWork(dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("expected an absolute path")
	}
	clean := filepath.Clean(dir)
	if parent, err := filepath.EvalSymlinks(filepath.Dir(clean)); err == nil {
		clean = filepath.Join(parent, filepath.Base(clean))
	}
	if resolved, err := filepath.EvalSymlinks(clean); err == nil {
		clean = resolved
	}
	if strings.Count(clean, "/") < 2 {
		return "", fmt.Errorf("%s is too close to / (expected a folder of its own, e.g. /tmp/npu-node)", clean)
	}
	entries, err := os.ReadDir(clean)
	if os.IsNotExist(err) {
		return clean, nil
	}
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return clean, nil
	}
	if _, err := os.Stat(filepath.Join(clean, WorkMarker)); err != nil {
		return "", fmt.Errorf("%s holds files and is not a kubenode work folder (no %s): give a new or empty folder",
			clean, WorkMarker)
	}
	return clean, nil
}
