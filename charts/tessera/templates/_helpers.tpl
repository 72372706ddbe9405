{{/* Names: <release>-tessera, or the release name when it already says tessera. */}}
{{- define "tessera.fullname" -}}
{{- if contains "tessera" .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-tessera" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tessera.operatorName" -}}{{ include "tessera.fullname" . }}-operator{{- end -}}
{{- define "tessera.routerName" -}}{{ include "tessera.fullname" . }}-router{{- end -}}
{{- define "tessera.redisName" -}}{{ include "tessera.fullname" . }}-redis{{- end -}}

{{- define "tessera.selectorLabels" -}}
app.kubernetes.io/name: tessera
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object; call with (dict "ctx" $ "component" "operator"). */}}
{{- define "tessera.labels" -}}
{{ include "tessera.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: tessera
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "tessera.componentSelector" -}}
{{ include "tessera.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tessera.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The pod's own IP, the address every server binds (on the dev cluster pods share the host). */}}
{{- define "tessera.podEnv" -}}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
- name: TESSERA_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{- define "tessera.redisSecretName" -}}
{{- default (include "tessera.redisName" .) .Values.redis.auth.existingSecret -}}
{{- end -}}

{{- define "tessera.redisSecretKey" -}}
{{- if .Values.redis.auth.existingSecret -}}{{ .Values.redis.auth.existingSecretKey }}{{- else -}}password{{- end -}}
{{- end -}}

{{/* The namespace the operator watches, or "" for all. */}}
{{- define "tessera.watchNamespace" -}}
{{- if not .Values.operator.clusterWide -}}{{ .Release.Namespace }}{{- end -}}
{{- end -}}
