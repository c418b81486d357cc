// Command pause is the sandbox ("infra") container of the real node's pods (kubenode builds the image
// localhost/npu-lifecycle/pause from it): it holds the pod's namespaces, reaps the zombies of a pod that shares
// its PID namespace and exits on SIGINT or SIGTERM, as the upstream pause container (build/pause/linux/pause.c)
// does. Built static (CGO_ENABLED=0): the image holds nothing else.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
