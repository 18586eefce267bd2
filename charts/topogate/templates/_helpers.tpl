{{/* Names: <release> when it already contains the chart name, else
<release>-topogate; cut to 63 characters (a DNS label). */}}
{{- define "topogate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "topogate.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "topogate.labels" -}}
{{ include "topogate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "topogate.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "topogate.tlsSecret" -}}
{{- printf "%s-tls" (include "topogate.fullname" .) -}}
{{- end -}}

{{- define "topogate.webhookConfig" -}}
{{- include "topogate.fullname" . -}}
{{- end -}}

{{/* The webhook entries, in order: the certgen hook patches caBundle by
index, /webhooks/0 .. N-1. */}}
{{- define "topogate.webhookCount" -}}
{{- if .Values.webhook.jobs.enabled }}2{{ else }}1{{ end -}}
{{- end -}}

{{- define "topogate.caSecret" -}}
{{- printf "%s-ca" (include "topogate.fullname" .) -}}
{{- end -}}

{{/* The jobs entry's failurePolicy: its own value, not the mode's
(values.yaml, webhook.jobs.failurePolicy, says why). */}}
{{- define "topogate.jobsFailurePolicy" -}}
{{- .Values.webhook.jobs.failurePolicy | default "Ignore" -}}
{{- end -}}

{{/* The pods entry's failurePolicy. */}}
{{- define "topogate.failurePolicy" -}}
{{- if .Values.webhook.failurePolicy -}}
{{- .Values.webhook.failurePolicy -}}
{{- else if eq .Values.mode "enforce" -}}
Fail
{{- else -}}
Ignore
{{- end -}}
{{- end -}}

{{/* The policy file as served: the chart's policy.yaml (or policy.yaml
from values) with the mode and the overrides from values merged in. With
nothing to change, the file goes out verbatim, comments and all, so
`kubectl get configmap` shows each entry's source and reason. */}}
{{- define "topogate.policy" -}}
{{- $text := .Values.policy.yaml | default (.Files.Get "policy.yaml") -}}
{{- if not $text -}}
{{- fail "policy.yaml is missing from the chart" -}}
{{- end -}}
{{- $doc := fromYaml $text -}}
{{- if hasKey $doc "Error" -}}
{{- fail (printf "policy: not YAML: %s" $doc.Error) -}}
{{- end -}}
{{- $p := .Values.policy -}}
{{- $same := and (empty $p.settings) (empty $p.namespaces) (empty $p.instanceTypes) -}}
{{- /* Only the mode differs (a first install is audit, the file says
enforce): rewrite that one line, so the comments stay. */ -}}
{{- $modeLine := `(?m)^mode:[ \t]*["']?[A-Za-z]*["']?` -}}
{{- $swapped := "" -}}
{{- if and $same (eq (len (regexFindAll $modeLine $text -1)) 1) -}}
{{- $swapped = regexReplaceAll $modeLine $text (printf "mode: %s" .Values.mode) -}}
{{- if ne (toString (fromYaml $swapped).mode) .Values.mode -}}
{{- $swapped = "" -}}
{{- end -}}
{{- end -}}
{{- if and $same (eq (toString ($doc.mode | default "enforce")) .Values.mode) -}}
{{- $text -}}
{{- else if $swapped -}}
{{- $swapped -}}
{{- else -}}
{{- $_ := set $doc "mode" .Values.mode -}}
{{- $doc = include "topogate.overlay" (dict "base" $doc "over" $p.settings) | fromYaml -}}
{{- $_ := set $doc "namespaces" (include "topogate.mergeByName" (dict "base" ($doc.namespaces | default list) "over" $p.namespaces) | fromYamlArray) -}}
{{- $_ := set $doc "instanceTypes" (include "topogate.mergeByName" (dict "base" ($doc.instanceTypes | default list) "over" $p.instanceTypes) | fromYamlArray) -}}
{{- printf "# Rendered by the topogate chart: policy.yaml with values merged in.\n%s" (toYaml $doc) -}}
{{- end -}}
{{- end -}}

{{/* Lists of {name: ...} maps: an entry of .over with a name in .base is
merged over it (its keys win), a new name is appended. Returns YAML. */}}
{{- define "topogate.mergeByName" -}}
{{- $out := list -}}
{{- $seen := dict -}}
{{- range $b := .base -}}
{{- $item := deepCopy $b -}}
{{- range $o := $.over -}}
{{- if eq (toString $o.name) (toString $b.name) -}}
{{- $item = include "topogate.overlay" (dict "base" $item "over" $o) | fromYaml -}}
{{- end -}}
{{- end -}}
{{- $_ := set $seen (toString $b.name) true -}}
{{- $out = append $out $item -}}
{{- end -}}
{{- range $o := .over -}}
{{- if not (hasKey $seen (toString $o.name)) -}}
{{- $out = append $out $o -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* .over laid over .base, two levels deep (inject: {...} inside an entry
is merged key by key); lists are replaced. Written with set rather than
sprig's merge, which treats false as unset and would drop
`hostIPC: false`. Returns YAML. */}}
{{- define "topogate.overlay" -}}
{{- $out := deepCopy .base -}}
{{- range $k, $v := .over -}}
{{- $old := get $out $k -}}
{{- if and (kindIs "map" $v) (kindIs "map" $old) -}}
{{- $m := deepCopy $old -}}
{{- range $k2, $v2 := $v -}}
{{- $_ := set $m $k2 $v2 -}}
{{- end -}}
{{- $_ := set $out $k $m -}}
{{- else -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* One namespaceSelector and objectSelector for both webhook entries. */}}
{{- define "topogate.selectors" -}}
{{- $ns := .Values.webhook.namespaces -}}
namespaceSelector:
  matchExpressions:
    # topogate's own pods, and kube-system, must never wait on topogate.
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values:
        {{- toYaml (uniq (prepend $ns.exclude .Release.Namespace)) | nindent 8 }}
    - key: {{ $ns.optOutLabel }}
      operator: NotIn
      values: ["true"]
    {{- with $ns.podSecurityExclude }}
    # The patch adds hostIPC and IPC_LOCK, which these Pod Security levels
    # forbid: the mutated pod would be rejected, so leave them alone.
    - key: pod-security.kubernetes.io/enforce
      operator: NotIn
      values:
        {{- toYaml . | nindent 8 }}
    {{- end }}
    {{- if $ns.optIn }}
    - key: {{ $ns.optInLabel }}
      operator: In
      values: ["true"]
    {{- end }}
objectSelector:
  matchExpressions:
    - key: {{ .Values.webhook.objectOptOutLabel }}
      operator: NotIn
      values: ["true"]
{{- end }}
{{- define "topogate.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "topogate.fullname" . }}
    namespace: {{ .Release.Namespace }}
    path: /mutate
    port: {{ .Values.service.port }}
  {{- if eq .Values.certs.method "hook" }}
  # Filled in by the certgen hook Job (kubectl patch).
  {{- end }}
{{- end }}

{{/* CEL for matchConditions: true when a container or init container asks
for one of webhook.gpuResources in its limits or requests. `object` is the
Pod of a CREATE (never null: DELETE is not registered). */}}
{{- define "topogate.gpuCondition" -}}
{{- $r := printf "[%s]" (include "topogate.celStrings" .Values.webhook.gpuResources) -}}
{{- $c := printf "has(c.resources) && ((has(c.resources.limits) && %s.exists(r, r in c.resources.limits)) || (has(c.resources.requests) && %s.exists(r, r in c.resources.requests)))" $r $r -}}
object.spec.containers.exists(c, {{ $c }}) ||
(has(object.spec.initContainers) && object.spec.initContainers.exists(c, {{ $c }}))
{{- end -}}

{{- define "topogate.celStrings" -}}
{{- $q := list -}}
{{- range . -}}
{{- $q = append $q (printf "'%s'" .) -}}
{{- end -}}
{{- join ", " $q -}}
{{- end -}}

{{/* What every container of the certgen pods shares: the locked-down
security context, small resources, and the emptyDir at /out (also HOME, so
kubectl's discovery cache has a writable place on a read-only root); .ca
and .cabundle add those volumes, read-only. */}}
{{- define "topogate.jobContainer" -}}
env:
  - name: HOME
    value: /out
resources:
  requests:
    cpu: 10m
    memory: 32Mi
  limits:
    memory: 128Mi
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  privileged: false
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
volumeMounts:
  - name: out
    mountPath: /out
  {{- if get . "ca" }}
  - name: ca
    mountPath: /ca
    readOnly: true
  {{- end }}
  {{- if get . "cabundle" }}
  - name: cabundle
    mountPath: /cabundle
    readOnly: true
  {{- end }}
{{- end -}}

{{/* The certgen pods' identity and rights (templates/certgen-job.yaml
says why each): .top, .name, .annotations (hook annotations, or none). */}}
{{- define "topogate.certgenRBAC" -}}
{{- $top := .top -}}
{{- $meta := include "topogate.certgenMeta" . -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .name }}
  namespace: {{ $top.Release.Namespace }}
  {{- $meta | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .name }}
  namespace: {{ $top.Release.Namespace }}
  {{- $meta | nindent 2 }}
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    resourceNames:
      - {{ include "topogate.tlsSecret" $top }}
      - {{ include "topogate.caSecret" $top }}
    verbs: ["get", "create", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .name }}
  namespace: {{ $top.Release.Namespace }}
  {{- $meta | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ .name }}
    namespace: {{ $top.Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .name }}
  {{- $meta | nindent 2 }}
rules:
  - apiGroups: ["admissionregistration.k8s.io"]
    resources: ["mutatingwebhookconfigurations"]
    resourceNames: [{{ include "topogate.webhookConfig" $top | quote }}]
    verbs: ["get", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .name }}
  {{- $meta | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .name }}
subjects:
  - kind: ServiceAccount
    name: {{ .name }}
    namespace: {{ $top.Release.Namespace }}
{{- end -}}

{{- define "topogate.certgenMeta" -}}
labels:
  {{- include "topogate.labels" .top | nindent 2 }}
{{- with .annotations }}
annotations:
  {{- range $k, $v := . }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* A certgen pod template: .top, .sa (its ServiceAccount), .steps in
order, the last one the main container:
  certgen       topogate certgen: the CA from Secret <full>-ca when it
                exists, both Secrets' YAML and the patch into /out
  apply         kubectl apply of /out's two Secrets
  patch         kubectl patch of the caBundle from /out
  patch-stored  the same, from the patch certgen stored in <full>-ca */}}
{{- define "topogate.certgenPod" -}}
{{- $top := .top -}}
{{- $v := $top.Values -}}
{{- $containers := list -}}
metadata:
  labels:
    {{- include "topogate.selectorLabels" $top | nindent 4 }}
    app.kubernetes.io/component: certgen
spec:
  serviceAccountName: {{ .sa }}
  # The one kind of pod in this chart that writes to the API.
  automountServiceAccountToken: true
  enableServiceLinks: false
  restartPolicy: OnFailure
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: {{ $v.certs.hook.runAsUser }}
    runAsGroup: {{ $v.certs.hook.runAsUser }}
    # Makes the mounted CA Secret (mode 0440) readable by certgen.
    fsGroup: {{ $v.certs.hook.runAsUser }}
    seccompProfile:
      type: RuntimeDefault
  {{- $n := len .steps }}
  {{- range $i, $step := .steps }}
  {{- if eq $i 0 }}
  {{- if gt $n 1 }}
  initContainers:
  {{- else }}
  containers:
  {{- end }}
  {{- else if eq $i (sub $n 1) }}
  containers:
  {{- end }}
    {{- if eq $step "certgen" }}
    - name: certgen
      image: {{ include "topogate.image" $top }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args:
        - certgen
        - --service
        - {{ include "topogate.fullname" $top }}
        - --namespace
        - {{ $top.Release.Namespace }}
        - --out
        - /out
        - --secret-name
        - {{ include "topogate.tlsSecret" $top }}
        # The CA: read from /ca when Secret <full>-ca holds one, made
        # otherwise; written to /out/ca-secret.yaml either way.
        - --ca-dir
        - /ca
        - --ca-secret-name
        - {{ include "topogate.caSecret" $top }}
        - --webhook-config
        - {{ include "topogate.webhookConfig" $top }}
        - --webhooks
        - {{ include "topogate.webhookCount" $top | quote }}
        - --days
        - {{ $v.certs.hook.days | quote }}
      {{- include "topogate.jobContainer" (dict "ca" true) | nindent 6 }}
    {{- else if eq $step "apply" }}
    - name: apply-secrets
      image: {{ $v.certs.hook.kubectlImage }}
      imagePullPolicy: IfNotPresent
      command: ["kubectl"]
      # Server-side apply: no last-applied annotation holding a second
      # copy of the keys, and a create authorized by the Secret's name.
      args:
        - apply
        - --server-side
        - --force-conflicts
        - --field-manager=topogate-certgen
        - --filename=/out/secret.yaml
        - --filename=/out/ca-secret.yaml
      {{- include "topogate.jobContainer" dict | nindent 6 }}
    {{- else if or (eq $step "patch") (eq $step "patch-stored") }}
    - name: patch-cabundle
      image: {{ $v.certs.hook.kubectlImage }}
      imagePullPolicy: IfNotPresent
      command: ["kubectl"]
      args:
        - patch
        - mutatingwebhookconfiguration
        - {{ include "topogate.webhookConfig" $top }}
        - --type=json
        {{- if eq $step "patch" }}
        - --patch-file=/out/cabundle-patch.json
        {{- else }}
        - --patch-file=/cabundle/cabundle-patch.json
        {{- end }}
      {{- include "topogate.jobContainer" (dict "cabundle" (eq $step "patch-stored")) | nindent 6 }}
    {{- end }}
  {{- end }}
  volumes:
    - name: out
      emptyDir:
        medium: Memory
        # certgen output plus kubectl's discovery cache.
        sizeLimit: 32Mi
    {{- if has "certgen" .steps }}
    # The kept CA. Optional: on a first install it does not exist yet.
    - name: ca
      secret:
        secretName: {{ include "topogate.caSecret" $top }}
        optional: true
        defaultMode: 0440
    {{- end }}
    {{- if has "patch-stored" .steps }}
    # Only the patch, not the CA key. Not optional: in a plain
    # `kubectl apply`, this pod waits until the other Job has stored it.
    - name: cabundle
      secret:
        secretName: {{ include "topogate.caSecret" $top }}
        items:
          - key: cabundle-patch.json
            path: cabundle-patch.json
    {{- end }}
{{- end -}}

{{/*
The webhook container's resources: .Values.resources, and with the live
audit on, its memory limit raised by liveAudit.expectedPods x 4 KiB,
rounded up to a MiB (the live audit keeps about 3.4 KB a running GPU pod:
docs/operating.md#memory). The limit must then be a whole number of Mi or
Gi, so that the sum stays a quantity a reader recognises.
*/}}
{{- define "topogate.resources" -}}
{{- $res := dict -}}
{{- range $k, $v := .Values.resources }}{{ $_ := set $res $k $v }}{{ end -}}
{{- $pods := int (.Values.liveAudit.expectedPods | default 0) -}}
{{- if and .Values.liveAudit.enabled (gt $pods 0) -}}
{{- $limits := dict -}}
{{- range $k, $v := ($res.limits | default dict) }}{{ $_ := set $limits $k $v }}{{ end -}}
{{- $mem := toString ($limits.memory | default "") -}}
{{- if not (regexMatch "^[0-9]+(Mi|Gi)$" $mem) -}}
{{- fail (printf "liveAudit.expectedPods: resources.limits.memory %q is not a whole number of Mi or Gi, so the live audit's %d x 4 KiB cannot be added to it: write it so, or set liveAudit.expectedPods: 0 and size it yourself" $mem $pods) -}}
{{- end -}}
{{- $mi := int (trimSuffix "Mi" (trimSuffix "Gi" $mem)) -}}
{{- if hasSuffix "Gi" $mem }}{{ $mi = mul $mi 1024 }}{{ end -}}
{{- $add := div (add (mul $pods 4) 1023) 1024 -}}
{{- $_ := set $limits "memory" (printf "%dMi" (add $mi $add)) -}}
{{- $_ := set $res "limits" $limits -}}
{{- end -}}
{{- toYaml $res -}}
{{- end -}}
