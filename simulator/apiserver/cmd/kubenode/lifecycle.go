package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// State is what a running node changed on the machine, in StateFile: a later start undoes it when this node was
// killed before it could.
type State struct {
	Work string `json:"work"`
	// Created are the folders outside Work that this node created (removed at the end); folders that existed
	// before are left.
	Created []string `json:"created"`
}

// machineFolders are the folders outside the work folder that containerd 1.6 and the kubelet write whatever their
// configuration says (shim sockets, the device-plugin folder).
var machineFolders = []string{"/run/containerd", "/var/lib/kubelet", "/var/log/pods"}

func newState(work string) *State {
	st := &State{Work: work}
	for _, d := range machineFolders {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			st.Created = append(st.Created, d)
		}
	}
	return st
}

func writeState(st *State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := StateFile + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, StateFile)
}

func readState() (*State, error) {
	data, err := os.ReadFile(StateFile)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.Work == "" || !filepath.IsAbs(st.Work) {
		return nil, fmt.Errorf("%s is not a kubenode state (%v): ignored", StateFile, err)
	}
	// trusted only as far as kubenode could have written it: a work folder kubenode marked (or that is gone), and
	// of the machine's folders only those kubenode knows
	if strings.Count(filepath.Clean(st.Work), "/") < 2 {
		return nil, fmt.Errorf("%s names work folder %s, too close to /: ignored", StateFile, st.Work)
	}
	if _, err := os.Stat(st.Work); err == nil {
		if _, err := os.Stat(filepath.Join(st.Work, WorkMarker)); err != nil {
			return nil, fmt.Errorf("%s names %s, which is not a kubenode work folder: ignored", StateFile, st.Work)
		}
	}
	var created []string
	for _, d := range st.Created {
		for _, known := range machineFolders {
			if d == known {
				created = append(created, d)
			}
		}
	}
	st.Created = created
	return &st, nil
}

// acquireLock takes the machine's node lock without waiting.
func acquireLock(work string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(LockFile), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(LockFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(LockFile)
		f.Close()
		return nil, fmt.Errorf("another real node runs on this machine (%s: %s); one at a time",
			LockFile, strings.TrimSpace(string(holder)))
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d, work folder %s\n", os.Getpid(), work)), 0)
	return f, nil
}

type exit struct {
	name, log string
	err       error
}

// servers are the node's long-running children.
type servers struct {
	procs  []*exec.Cmd
	names  []string
	exited chan exit
}

func (s *servers) start(name, log, bin string, args ...string) error {
	if s.exited == nil {
		s.exited = make(chan exit, 8)
	}
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	// its own process group: a Ctrl-C on the terminal reaches kubenode, which stops the servers in order
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("cannot start %s: %v", name, err)
	}
	s.procs = append(s.procs, cmd)
	s.names = append(s.names, name)
	go func() {
		err := cmd.Wait()
		out.Close()
		s.exited <- exit{name: name, log: log, err: err}
	}()
	return nil
}

// stop ends the servers in reverse order of their start: SIGTERM, then SIGKILL after the grace period.
func (s *servers) stop(grace time.Duration) {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i].Process
		_ = p.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for {
				if err := p.Signal(syscall.Signal(0)); err != nil {
					close(done)
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		select {
		case <-done:
		case <-time.After(grace):
			_ = p.Kill()
		}
	}
}

// teardown undoes everything a node did; each step goes on after a failure of the one before, which it logs.
func teardown(st *State, procs *servers) {
	step := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(os.Stderr, "kubenode: teardown: %s: %v\n", what, err)
		}
	}
	if procs != nil {
		// the kubelet first (it would restart what is killed), kube-proxy, then containerd once its pods are gone
		var keep []*exec.Cmd
		var names []string
		for i, n := range procs.names {
			if n != "containerd" {
				keep = append(keep, procs.procs[i])
				names = append(names, n)
			}
		}
		(&servers{procs: keep, names: names}).stop(10 * time.Second)
	}
	// the pods' processes and their shims, until none is left (a SIGKILLed process takes a moment to go, and a
	// shim may still be starting)
	killUntilGone(func() []int { return append(podProcesses(), shims(st.Work)...) })
	if procs != nil {
		procs.stop(10 * time.Second)
	}
	containerd := "containerd --config " + filepath.Join(st.Work, "containerd/config.toml")
	killUntilGone(func() []int { return append(append(byCommand(containerd), shims(st.Work)...), podProcesses()...) })
	step("unmount", unmountUnder(append([]string{st.Work}, st.Created...)))
	step("bridge", deleteBridge())
	for _, family := range []string{"ip", "ip6"} {
		if err := exec.Command("nft", "list", "table", family, "kube-proxy").Run(); err == nil {
			step("nftables", sh("nft", "delete", "table", family, "kube-proxy"))
		}
	}
	step("cgroups", removeCgroupRoot())
	for _, d := range st.Created {
		// a folder another runtime uses now (a container daemon started meanwhile: its socket) is left
		if _, err := os.Stat(filepath.Join(d, "containerd.sock")); err == nil {
			fmt.Fprintf(os.Stderr, "kubenode: teardown: %s is in use by another containerd: left\n", d)
			continue
		}
		step("remove "+d, os.RemoveAll(d))
	}
	if left := MountsUnder([]string{st.Work}); len(left) > 0 {
		// the state stays: the next start tries again
		fmt.Fprintf(os.Stderr, "kubenode: teardown: still mounted: %v; %s kept for the next start\n", left, StateFile)
		return
	}
	step("state", os.Remove(StateFile))
}

// podProcesses are the pids in the kubelet's cgroupRoot (per the pids hierarchy, else any v1 hierarchy).
func podProcesses() []int {
	var pids []int
	for _, h := range v1Hierarchies() {
		root := filepath.Join(h, CgroupRoot)
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && info.Name() == "cgroup.procs" {
				data, _ := os.ReadFile(p)
				for _, f := range strings.Fields(string(data)) {
					if n, err := strconv.Atoi(f); err == nil {
						pids = append(pids, n)
					}
				}
			}
			return nil
		})
		if len(pids) > 0 {
			return pids
		}
	}
	return pids
}

// shims are containerd's shim processes of this node (their -address names its socket).
func shims(work string) []int {
	return byCommand("containerd-shim", containerdSocket(work))
}

// byCommand returns the pids whose command line contains every part.
func byCommand(parts ...string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(data), "\x00", " ")
		all := true
		for _, p := range parts {
			if !strings.Contains(cmd, p) {
				all = false
				break
			}
		}
		if all {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killUntilGone SIGKILLs the processes find returns until it returns none, for at most 10 s.
func killUntilGone(find func() []int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := find()
		if len(pids) == 0 || time.Now().After(deadline) {
			if len(pids) > 0 {
				fmt.Fprintf(os.Stderr, "kubenode: teardown: processes %v did not end\n", pids)
			}
			return
		}
		killAll(pids)
		time.Sleep(100 * time.Millisecond)
	}
}

func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// unescape decodes the octal escapes of /proc/self/mounts and mountinfo (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountsUnder lists the mount points at or under any of the folders, deepest first.
func MountsUnder(folders []string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescape(f[4])
		for _, d := range folders {
			if mp == d || strings.HasPrefix(mp, d+"/") {
				out = append(out, mp)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unmountUnder detaches every mount under the folders (rootfs overlays, pod volumes, netns and shm mounts).
func unmountUnder(folders []string) error {
	var failed []string
	for round := 0; round < 3; round++ {
		failed = nil
		for _, mp := range MountsUnder(folders) {
			if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL &&
				err != syscall.ENOENT {
				failed = append(failed, mp+": "+err.Error())
			}
		}
		if len(MountsUnder(folders)) == 0 {
			return nil
		}
	}
	return fmt.Errorf("still mounted: %s", strings.Join(append(failed, MountsUnder(folders)...), ", "))
}

func deleteBridge() error {
	if !BridgeReady() {
		return nil
	}
	return sh("ip", "link", "del", Bridge)
}

// removeCgroupRoot removes the cgroup tree of the kubelet's cgroupRoot in every hierarchy (v1, and v2 where mounted),
// deepest first.
func removeCgroupRoot() error {
	var failed []string
	for _, h := range allHierarchies() {
		root := filepath.Join(h, CgroupRoot)
		var dirs []string
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			for i := 0; i < 20; i++ {
				if err = syscall.Rmdir(d); err == nil || err == syscall.ENOENT {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				failed = append(failed, d+": "+err.Error())
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("cannot remove %s", strings.Join(failed, ", "))
	}
	return nil
}
