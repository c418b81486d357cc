{{/* Names and labels shared by every template. Object names are fixed (DESIGN.md, docs/security.md): the code and
the RBAC refer to them, so they do not depend on the release name. */}}

{{/* chart label value: <name>-<version> */}}
{{- define "npu-lifecycle.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* the common labels of every object */}}
{{- define "npu-lifecycle.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: npu-lifecycle
helm.sh/chart: {{ include "npu-lifecycle.chart" . }}
{{- end -}}

{{/* An image reference: {{ include "npu-lifecycle.image" (dict "root" . "image" .Values.images.controlPlane) }}.
A digest wins over the tag; the tag defaults to the chart's appVersion; the registry is images.registry unless the
image names its own. */}}
{{- define "npu-lifecycle.image" -}}
{{- $registry := .image.registry | default .root.Values.images.registry -}}
{{- $repo := .image.repository -}}
{{- $name := ternary $repo (printf "%s/%s" $registry $repo) (empty $registry) -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $name .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $name (.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets of a pod spec (nothing when the list is empty) */}}
{{- define "npu-lifecycle.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The Secret holding the Jolokia user and password */}}
{{- define "npu-lifecycle.jolokiaSecret" -}}
{{- .Values.jolokia.existingSecret | default "npu-lifecycle-jolokia" -}}
{{- end -}}

{{/* The scheduling of a node workload (nodeAgent or driver): nodeSelector, affinity, tolerations, priority.
   Called with (dict "w" .Values.nodeAgent) */}}
{{- define "npu-lifecycle.scheduling" -}}
{{- with .w.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .w.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .w.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .w.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The Jolokia credentials and listeners of a runtime container (env entries) */}}
{{- define "npu-lifecycle.runtimeEnv" -}}
# Jolokia (and the health endpoints) on the pod's loopback only: reach Jolokia with kubectl port-forward
# (RBAC pods/portforward in the namespace); the probes run inside the container
- name: NPU_LIFECYCLE_HTTP_HOST
  value: "127.0.0.1"
- name: NPU_LIFECYCLE_HTTP_PORT
  value: {{ .Values.jolokia.port | quote }}
# /metrics (read-only, no operation) on its own listener: every address of the pod (the default inside a pod), so
# Prometheus scrapes the pod IP while Jolokia stays on loopback
- name: NPU_LIFECYCLE_METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
- name: NPU_LIFECYCLE_JOLOKIA_USER
  valueFrom:
    secretKeyRef:
      name: {{ include "npu-lifecycle.jolokiaSecret" . }}
      key: user
- name: NPU_LIFECYCLE_JOLOKIA_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "npu-lifecycle.jolokiaSecret" . }}
      key: password
{{- end -}}

{{/* exec probes against the loopback-bound health endpoints (the kubelet cannot reach the pod's loopback) */}}
{{- define "npu-lifecycle.probes" -}}
startupProbe:
  exec:
    command: ["curl", "-fsS", "-o", "/dev/null", "--max-time", "4", "http://127.0.0.1:{{ .Values.jolokia.port }}/health/live"]
  periodSeconds: 5
  timeoutSeconds: 5
  failureThreshold: 36
livenessProbe:
  exec:
    command: ["curl", "-fsS", "-o", "/dev/null", "--max-time", "4", "http://127.0.0.1:{{ .Values.jolokia.port }}/health/live"]
  periodSeconds: 30
  timeoutSeconds: 5
  failureThreshold: 3
readinessProbe:
  exec:
    command: ["curl", "-fsS", "-o", "/dev/null", "--max-time", "4", "http://127.0.0.1:{{ .Values.jolokia.port }}/health/ready"]
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
{{- end -}}

{{/* The prometheus.io annotations of a pod (plain Prometheus, kubernetes_sd_configs role: pod) */}}
{{- define "npu-lifecycle.scrapeAnnotations" -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.metrics.port | quote }}
prometheus.io/path: "/metrics"
{{- end -}}

{{/* Node configuration files (ConfigMap npu-lifecycle-node-config) mounted into <home>/etc/ one by one; with
simulator.enabled also io.npulifecycle.simulator.cfg, whose presence in etc/ is what makes the launcher install the
simulator bundle (and refuse a real reboot executor), and io.npulifecycle.time.cfg (simulator.clock). Every key listed here must be in 40-node-agent-config.yaml. */}}
{{- define "npu-lifecycle.nodeConfigFiles" -}}
{{- $files := list "io.npulifecycle.probe.cfg" "io.npulifecycle.rebooter.executor.cfg" "io.npulifecycle.markers.cfg" "io.npulifecycle.driver.cfg" -}}
{{- if .Values.simulator.enabled -}}
{{- $files = concat $files (list "io.npulifecycle.simulator.cfg" "io.npulifecycle.time.cfg") -}}
{{- end -}}
{{- $files | toJson -}}
{{- end -}}

{{/* The emulated host's state folder inside the node-agent containers (hostPath simulator.stateHostPath, volume
simulator-state). The simulator writes bin/npu-smi, proc-modules, boot_id, lib/libdcmi.so below it; the node
configuration points the probe, markers and driver PIDs there (40-node-agent-config.yaml). */}}
{{- define "npu-lifecycle.simulatorStateDir" -}}
/var/lib/npu-lifecycle-simulator
{{- end -}}

{{/* Refuses simulator.enabled with a real reboot executor (node.reboot.executor libc or command): a simulated node
must never reboot its host. values.schema.json refuses it first; this holds when the schema is skipped
(helm --skip-schema-validation). Included by 40-node-agent-config.yaml, which every install renders. */}}
{{- define "npu-lifecycle.simulatorGuard" -}}
{{- if and .Values.simulator.enabled (ne .Values.node.reboot.executor "none") }}
{{- fail (printf "simulator.enabled=true needs node.reboot.executor=none (got %s): a simulated node must never reboot its host; the simulator's own reboot executor (service ranking 1000) ends the node-agent container instead" .Values.node.reboot.executor) }}
{{- end }}
{{- end -}}


{{/* The node agent's environment (node-agent DaemonSet and the node-agent container of the driver DaemonSets) */}}
{{- define "npu-lifecycle.nodeAgentEnv" -}}
# the small-footprint JVM options measured in docs/benchmarks.md (the same as bin/npu-lifecycle's default for the
# node role; stated here so an operator sees and tunes them with the memory limit)
- name: NPU_LIFECYCLE_JAVA_OPTS
  value: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CompileThresholdScaling=4 -Xms16m -Xmx128m -Xmn2m -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=15 -XX:MaxMetaspaceSize=96m -XX:ReservedCodeCacheSize=24m -Xss512k -XX:TrimNativeHeapInterval=5000 -XX:+ExitOnOutOfMemoryError -XX:+DisableAttachMechanism"
# PID io.npulifecycle.kube.node reads the node name from NODE_NAME when its nodeName key is empty
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
{{ include "npu-lifecycle.runtimeEnv" . }}
{{- end -}}

{{/* The node agent's volume mounts: runtime home, the node configuration files, the five host paths (node.hostPaths),
and with simulator.enabled the emulated host's state (simulator.stateHostPath) */}}
{{- define "npu-lifecycle.nodeAgentMounts" -}}
- name: home
  mountPath: /var/lib/npu-lifecycle
- name: tmp
  mountPath: /tmp
{{- range (include "npu-lifecycle.nodeConfigFiles" . | fromJsonArray) }}
- name: node-config
  mountPath: /var/lib/npu-lifecycle/etc/{{ . }}
  subPath: {{ . }}
  readOnly: true
{{- end }}
# markers (driver-ready, reboot-required): a tmpfs on the host, cleared by a reboot
- name: run-npu-operator
  mountPath: /run/npu-operator
# state that outlives a reboot: rebooter.state, driver-staged / driver-current, and the driver packages the driver
# container copies (driver-packages/<version>/), which the loader reads at the next boot
- name: var-lib-npu-operator
  mountPath: /var/lib/npu-operator
# npu-smi, the driver's libraries (LD_LIBRARY_PATH of DESIGN.md), where the loader installs a driver
- name: ascend
  mountPath: /var/lib/Ascend
# /dev/davinci*, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc, also those created after start
- name: dev
  mountPath: /dev
# the host's /proc/modules and boot id (io.npulifecycle.driver procModules, io.npulifecycle.markers bootIdPath),
# independent of what the runtime masks in the container's own /proc
- name: host-proc
  mountPath: /host/proc
  readOnly: true
{{- if .Values.simulator.enabled }}
# simulator.enabled (test tooling): the emulated host (chips, npu-smi, /proc/modules, boot id), kept on the host so
# that it outlives the container, as a real host outlives a reboot
- name: simulator-state
  mountPath: {{ include "npu-lifecycle.simulatorStateDir" . }}
{{- end }}
{{- end -}}

{{/* The node agent's volumes. The host side of each hostPath is a value (node.hostPaths.*, simulator.stateHostPath) so
that a test can point them into its own folder; the container side is fixed (the node configuration names it). */}}
{{- define "npu-lifecycle.nodeAgentVolumes" -}}
- name: home
  emptyDir: {}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
- name: node-config
  configMap:
    name: npu-lifecycle-node-config
- name: run-npu-operator
  hostPath:
    path: {{ .Values.node.hostPaths.runNpuOperator | quote }}
    type: DirectoryOrCreate
- name: var-lib-npu-operator
  hostPath:
    path: {{ .Values.node.hostPaths.varLibNpuOperator | quote }}
    type: DirectoryOrCreate
- name: ascend
  hostPath:
    path: {{ .Values.node.hostPaths.ascend | quote }}
    type: DirectoryOrCreate
- name: dev
  hostPath:
    path: {{ .Values.node.hostPaths.dev | quote }}
    type: Directory
- name: host-proc
  hostPath:
    path: {{ .Values.node.hostPaths.proc | quote }}
    type: Directory
{{- if .Values.simulator.enabled }}
- name: simulator-state
  hostPath:
    path: {{ .Values.simulator.stateHostPath | quote }}
    type: DirectoryOrCreate
{{- end }}
{{- end -}}

{{/* PID io.npulifecycle.time (the runtimes' clock) with simulator.enabled: simulator.clock's scale and anchor, the
same in the node agents and the control plane so that they agree on the simulated time. */}}
{{- define "npu-lifecycle.simulatorClock" -}}
scale={{ .Values.simulator.clock.scale }}
anchorEpochMillis={{ int64 .Values.simulator.clock.anchorEpochMillis }}
{{- end -}}
