package kubeconfig

import "testing"

func TestReachableServer(t *testing.T) {
	cases := []struct {
		name, server, host, want string
		wantErr                  bool
	}{
		{name: "k3s loopback", server: "https://127.0.0.1:6443", host: "192.168.1.10", want: "https://192.168.1.10:6443"},
		{name: "localhost", server: "https://localhost:6443", host: "10.0.0.5", want: "https://10.0.0.5:6443"},
		{name: "IPv6 loopback", server: "https://[::1]:6443", host: "fd00::10", want: "https://[fd00::10]:6443"},
		{name: "already reachable", server: "https://k8s.lan:6443", host: "192.168.1.10", want: "https://k8s.lan:6443"},
		{name: "loopback without a replacement", server: "https://127.0.0.1:6443", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReachableServer(tc.server, tc.host)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
