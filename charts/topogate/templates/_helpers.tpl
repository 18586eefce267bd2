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
{{- if and (eq (toString ($doc.mode | default "enforce")) .Values.mode) (empty $p.settings) (empty $p.namespaces) (empty $p.instanceTypes) -}}
{{- $text -}}
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

{{/* What every container of the certgen Job shares: the locked-down
security context, small resources, and the emptyDir at /out (also HOME, so
kubectl's discovery cache has a writable place on a read-only root). */}}
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
{{- end -}}
