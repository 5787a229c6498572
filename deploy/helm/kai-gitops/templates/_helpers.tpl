{{/* The prefix of every object's name: the release name when it already says kai-gitops (release
kai-gitops gives the names deploy/ uses), else <release>-kai-gitops. */}}
{{- define "kai-gitops.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kai-gitops.serviceAccountName" -}}
{{- include "kai-gitops.fullname" . -}}
{{- end -}}

{{/* deploy/'s two labels, and Helm's own. */}}
{{- define "kai-gitops.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/part-of: kai-gitops
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The one subject of every binding: the chart's ServiceAccount. */}}
{{- define "kai-gitops.subjects" -}}
subjects:
  - kind: ServiceAccount
    name: {{ include "kai-gitops.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end -}}

{{- define "kai-gitops.image" -}}
{{- $repository := required "image.repository is required: where you pushed the image built from kai-gitops's Dockerfile (kai-gitops publishes none), e.g. --set image.repository=<your-registry>/kai-gitops" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "kai-gitops.cluster" -}}
{{- required "settings.cluster is required: the name of this cluster in your GitOps repository's kai-gitops.yaml, e.g. --set settings.cluster=<cluster>" .Values.settings.cluster -}}
{{- end -}}

{{/* deploy/'s mode label: report-only or self-heal. */}}
{{- define "kai-gitops.modeLabel" -}}
{{- if eq .Values.mode "selfHeal" -}}self-heal{{- else -}}report-only{{- end -}}
{{- end -}}

{{/* Mode selfHeal: the claim that keeps the runs' audit log (selfHeal.stateClaim.name, else <fullname>-state). */}}
{{- define "kai-gitops.stateClaim" -}}
{{- default (printf "%s-state" (include "kai-gitops.fullname" .)) .Values.selfHeal.stateClaim.name -}}
{{- end -}}
