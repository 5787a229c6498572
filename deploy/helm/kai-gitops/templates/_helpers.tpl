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
{{- if eq .Values.mode "selfHeal" -}}self-heal{{- else if eq .Values.mode "fleet" -}}fleet{{- else -}}report-only{{- end -}}
{{- end -}}

{{/* Mode selfHeal: the claim that keeps the runs' audit log (selfHeal.stateClaim.name, else <fullname>-state). */}}
{{- define "kai-gitops.stateClaim" -}}
{{- default (printf "%s-state" (include "kai-gitops.fullname" .)) .Values.selfHeal.stateClaim.name -}}
{{- end -}}

{{/* Mode fleet: the claim the Indexed Job's pods write their shard reports to (fleet.reportsClaim.name, else <fullname>-reports). */}}
{{- define "kai-gitops.reportsClaim" -}}
{{- default (printf "%s-reports" (include "kai-gitops.fullname" .)) .Values.fleet.reportsClaim.name -}}
{{- end -}}

{{/* Mode fleet: fleet.reportTo as the --report-to options of each cluster's run. */}}
{{- define "kai-gitops.fleetReportTo" -}}
{{- $options := list -}}
{{- range .Values.fleet.reportTo }}{{ $options = append $options (printf "--report-to=%s" .) }}{{ end -}}
{{- join " " $options -}}
{{- end -}}
