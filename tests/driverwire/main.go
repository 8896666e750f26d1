// driverwire calls a DRA kubelet plugin through upstream's own generated gRPC clients
// (k8s.io/kubelet pkg/apis/pluginregistration/v1 and pkg/apis/dra/v1, the code the kubelet
// links), so a test proves that our .proto files put the same bytes on the wire.
//
//	driverwire info REGISTRATION_SOCKET
//	driverwire prepare|unprepare DRA_SOCKET NAMESPACE NAME UID
//
// Each prints the response as JSON (Go field names) on stdout.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func main() {
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: driverwire info|prepare|unprepare SOCKET [NAMESPACE NAME UID]"))
	}
	conn, err := grpc.NewClient("unix://"+os.Args[2], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var answer any
	switch os.Args[1] {
	case "info":
		registration := registerapi.NewRegistrationClient(conn)
		info, err := registration.GetInfo(ctx, &registerapi.InfoRequest{})
		if err != nil {
			fail(err)
		}
		_, err = registration.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true})
		if err != nil {
			fail(err)
		}
		answer = info
	case "prepare", "unprepare":
		if len(os.Args) != 6 {
			fail(fmt.Errorf("%s needs NAMESPACE NAME UID", os.Args[1]))
		}
		claims := []*drapb.Claim{{Namespace: os.Args[3], Name: os.Args[4], Uid: os.Args[5]}}
		plugin := drapb.NewDRAPluginClient(conn)
		if os.Args[1] == "prepare" {
			answer, err = plugin.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: claims})
		} else {
			answer, err = plugin.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: claims})
		}
		if err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("unknown call %q", os.Args[1]))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answer); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "driverwire:", err)
	os.Exit(1)
}
