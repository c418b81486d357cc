package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func containerdSocket(work string) string {
	return filepath.Join(work, "containerd/containerd.sock")
}

// ensureTools installs containerd, runc, the CNI plugins, nftables and iproute2 with apt-get when one is missing
// (Debian 12: containerd 1.6.20, runc 1.1.5, containernetworking-plugins 1.1.1).
func ensureTools() error {
	need := map[string]string{"containerd": "containerd", "containerd-shim-runc-v2": "containerd", "ctr": "containerd",
		"runc": "runc", "nft": "nftables", "ip": "iproute2"}
	var pkgs []string
	seen := map[string]bool{}
	for bin, pkg := range need {
		if _, err := exec.LookPath(bin); err != nil && !seen[pkg] {
			pkgs = append(pkgs, pkg)
			seen[pkg] = true
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		pkgs = append(pkgs, "containernetworking-plugins")
	}
	if len(pkgs) == 0 {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("missing packages %s and no apt-get to install them: install them, then start again",
			strings.Join(pkgs, " "))
	}
	logf("installing %s with apt-get", strings.Join(pkgs, " "))
	// the packages' services must not start (containerd's would take /run/containerd): a policy-rc.d refusing every
	// service start for the install, as Debian's container images ship one; one already there is left as found
	const policy = "/usr/sbin/policy-rc.d"
	if _, err := os.Stat(policy); os.IsNotExist(err) {
		if err := os.WriteFile(policy, []byte("#!/bin/sh\nexit 101\n"), 0o755); err == nil {
			defer os.Remove(policy)
		}
	}
	install := func() ([]byte, error) {
		cmd := exec.Command("apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	out, err := install()
	if err != nil {
		// a fresh machine's package lists may be missing or old: update them once and try again
		if upd, uerr := exec.Command("apt-get", "update", "-q").CombinedOutput(); uerr != nil {
			return fmt.Errorf("apt-get update failed (%v): %s", uerr, tail(string(upd), 2000))
		}
		out, err = install()
	}
	if err != nil {
		return fmt.Errorf("apt-get install -y %s failed (%v): %s", strings.Join(pkgs, " "), err, tail(string(out), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// createBridge makes the pods' bridge with the node's address: the kubelet, kube-apiserver's endpoint and the pods'
// gateway are that one address, which never leaves the machine.
func createBridge() error {
	if err := sh("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := sh("ip", "addr", "add", NodeAddress+"/24", "dev", Bridge); err != nil {
		return err
	}
	return sh("ip", "link", "set", Bridge, "up")
}

// BridgeReady reports whether the node's address is on the bridge (kube-apiserver binds to it).
func BridgeReady() bool {
	ifc, err := net.InterfaceByName(Bridge)
	return err == nil && ifc != nil
}

// v1Hierarchies returns the mounted cgroup v1 hierarchies, e.g. /sys/fs/cgroup/cpu.
func v1Hierarchies() []string {
	return cgroupMounts("cgroup")
}

// allHierarchies returns the cgroup v1 hierarchies and the cgroup v2 mounts: on a hybrid machine (v2 mounted at
// /sys/fs/cgroup/unified beside the v1 hierarchies) runc makes the pods' cgroups in the v2 tree too.
func allHierarchies() []string {
	return append(v1Hierarchies(), cgroupMounts("cgroup2")...)
}

// cgroupMounts returns the mount points of the file system type fsType ("cgroup" or "cgroup2").
func cgroupMounts(fsType string) []string {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[2] == fsType {
			out = append(out, unescape(f[1]))
		}
	}
	return out
}

// createCgroupRoot makes /npu-lifecycle-node in every v1 hierarchy (the kubelet's cgroupRoot must exist); a new
// cpuset cgroup gets its parent's cpus and mems, without which no process may join it.
func createCgroupRoot() error {
	for _, h := range v1Hierarchies() {
		dir := filepath.Join(h, CgroupRoot)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cannot create the cgroup %s: %v", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return fmt.Errorf("cannot write %s: %v", filepath.Join(dir, f), err)
				}
			}
		}
	}
	return nil
}

func write(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}

// writeConfigs writes containerd's, the CNI's, the kubelet's and kube-proxy's configuration under the work folder.
func writeConfigs(o Options) error {
	w := o.Work
	// restrict_oom_score_adj: these machines lack CAP_SYS_RESOURCE in the bounding set, so no process may lower an
	// oom_score_adj; containerd's -998 for sandboxes would make runc fail ("failed to update
	// /proc/self/oom_score_adj: Permission denied"). runc's root and the netns mounts under the state folder keep
	// them out of /run.
	containerd := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  sandbox_image = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      Root = %q
`, filepath.Join(w, "containerd/root"), filepath.Join(w, "containerd/state"), containerdSocket(w), PauseImage,
		filepath.Join(w, "cni/conf"), filepath.Join(w, "containerd/runc"))
	if err := write(filepath.Join(w, "containerd/config.toml"), containerd); err != nil {
		return err
	}
	cni := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "npu-lifecycle-node",
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": %q}},
    {"type": "loopback"}
  ]
}
`, Bridge, PodCIDR, NodeAddress, filepath.Join(w, "cni/ipam"))
	if err := write(filepath.Join(w, "cni/conf/10-npu-lifecycle-node.conflist"), cni); err != nil {
		return err
	}
	kubeletPort, err := freePort()
	if err != nil {
		return err
	}
	healthzPort, err := freePort()
	if err != nil {
		return err
	}
	// failCgroupV1 false: these machines mount cgroup v1 (kubelets from 1.35 refuse it otherwise).
	// makeIPTablesUtilChains false: the kubelet leaves the host's iptables alone.
	// Image garbage collection and eviction off: the node's images are imported, never pulled again.
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
cgroupsPerQOS: true
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix://%s
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization: {mode: Webhook}
makeIPTablesUtilChains: false
failSwapOn: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
podLogsDir: %q
localStorageCapacityIsolation: false
resolvConf: ""
clusterDomain: cluster.local
shutdownGracePeriod: 0s
`, CgroupRoot, containerdSocket(w), NodeAddress, kubeletPort, healthzPort, o.ClientCA,
		filepath.Join(w, "kubelet/pods-logs"))
	if err := write(filepath.Join(w, "kubelet/config.yaml"), kubelet); err != nil {
		return err
	}
	proxyHealth, err := freePort()
	if err != nil {
		return err
	}
	proxyMetrics, err := freePort()
	if err != nil {
		return err
	}
	// conntrack all 0: kube-proxy leaves the host's conntrack sysctls as they are
	proxy := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection:
  kubeconfig: %q
hostnameOverride: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
clusterCIDR: %s
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, o.ProxyKubeconfig, o.NodeName, NodeAddress, proxyHealth, proxyMetrics, PodCIDR)
	return write(filepath.Join(w, "kube-proxy/config.yaml"), proxy)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitForSocket(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctr runs containerd's ctr in the k8s.io namespace (the CRI's) against this node's containerd.
func ctr(work string, args ...string) error {
	return sh("ctr", append([]string{"--address", containerdSocket(work), "--namespace", "k8s.io"}, args...)...)
}
