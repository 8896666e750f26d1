module github.com/dra-operator/dra-operator/tests/driverwire

go 1.26.0

// The versions e2e/controlplane builds the kubelet with.
require (
	google.golang.org/grpc v1.83.2
	k8s.io/kubelet v0.36.4
)

require (
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
)
