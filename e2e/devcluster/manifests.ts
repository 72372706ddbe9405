// Manifests the dev cluster end-to-end tests apply with the real clients.

export const appManifest = (replicas: number, value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  labels: {app: web}
data:
  greeting: ${JSON.stringify(value)}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: server
        image: tessera/web:1
        env: [{name: GREETING, value: ${JSON.stringify(value)}}]
        ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;

export const widgetCrd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.tessera.dev
spec:
  group: example.tessera.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Role, type: string, jsonPath: .spec.role}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [model]
            x-kubernetes-validations:
            - rule: "self.replicas <= self.maxReplicas"
              message: replicas must not exceed maxReplicas
            properties:
              model: {type: string, minLength: 1}
              replicas: {type: integer, minimum: 0, default: 1}
              maxReplicas: {type: integer, default: 8}
              role: {type: string, enum: [prefill, decode, both], default: both}
          status:
            type: object
            properties:
              replicas: {type: integer}
`;

export const widget = (name: string, spec: string) => `apiVersion: example.tessera.dev/v1
kind: Widget
metadata:
  name: ${name}
spec: ${spec}
`;

export const chart = {
  "Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
  "values.yaml": "replicas: 1\nmessage: hello\n",
  "templates/app.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ .Release.Name }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      serviceAccountName: {{ .Release.Name }}
      containers:
      - name: server
        image: tessera/web:1
        env: [{name: MESSAGE, value: {{ .Values.message | quote }}}]
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .Release.Name }}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .Release.Name }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ .Release.Name }}}
subjects: [{kind: ServiceAccount, name: {{ .Release.Name }}}]
`,
};
