package nodeload

import (
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
)

// fakeHandle is a framework handle that only has an event recorder.
type fakeHandle struct {
	fwk.Handle
	rec *events.FakeRecorder
}

func (h fakeHandle) EventRecorder() events.EventRecorderLogger { return h.rec }
