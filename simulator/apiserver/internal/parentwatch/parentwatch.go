// Package parentwatch ends a server of the simulated cluster when the process that started it is gone.
//
// RealApiServer (simulator/cluster) starts etcd and kube-apiserver as direct children of a JVM. A JVM that is
// SIGKILLed (a CI time-out, the OOM killer, kill -9 of `npu-lifecycle cluster`) cannot stop them, and they would
// keep serving on loopback with their data folder until the next start reaps them. Once its parent is gone the
// child is re-parented (to init or a subreaper), so a changed parent pid means the JVM died: the server then stops
// itself as on SIGTERM, and is killed outright if it has not exited within the grace period.
package parentwatch

import (
	"os"
	"syscall"
	"time"
)

// Poll is how often the parent pid is compared; Grace how long a SIGTERM may take before the process exits anyway.
const (
	Poll  = time.Second
	Grace = 10 * time.Second
)

// Start watches the parent in the background. It does nothing when the process was started by init (pid 1),
// where there is no parent to outlive.
func Start() {
	parent := os.Getppid()
	if parent <= 1 {
		return
	}
	go func() {
		for range time.Tick(Poll) {
			if os.Getppid() != parent {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				time.Sleep(Grace)
				os.Exit(3)
			}
		}
	}()
}
