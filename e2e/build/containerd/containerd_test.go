//go:build linux

package containerd

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pauseImage is the sandbox image the test builds from the pause binary.
const pauseImage = "ballast.local/e2e/pause:containerd-test"

// config is a containerd 2.x configuration (version 3) that keeps every file,
// socket and mount under one directory, runs pods with Debian's runc on
// cgroupfs, wires pods up with the CNI plugins in /usr/lib/cni, pins the
// sandbox image to a local name and listens on no TCP port but the CRI
// streaming server's, on 127.0.0.1 of containerd's network namespace.
var config = template.Must(template.New("config").Parse(`version = 3
root = "{{.Dir}}/root"
state = "{{.Dir}}/state"
temp = "{{.Dir}}/tmp"
imports = []

[grpc]
  address = "{{.Dir}}/containerd.sock"
  tcp_address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "{{.SandboxImage}}"

  [plugins.'io.containerd.cri.v1.runtime']
    netns_mounts_under_state_dir = true
    enable_cdi = false
    # The node runs on cgroup v1, which containerd 2.2 deprecates but keeps:
    # do not let that alone fail the CRI status's deprecation condition.
    ignore_deprecation_warnings = ["io.containerd.deprecation/cgroup-v1"]
    # Without CAP_SYS_RESOURCE (this machine's root lacks it) no process may
    # lower its oom_score_adj, so runc cannot give a sandbox the kubelet's
    # -998: clamp requested scores to containerd's own instead.
    restrict_oom_score_adj = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "{{.Runc}}"
          Root = "{{.Dir}}/state/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "{{.Dir}}/cni/net.d"

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

  [plugins.'io.containerd.internal.v1.opt']
    path = "{{.Dir}}/opt"

  [plugins.'io.containerd.nri.v1.nri']
    disable = true
`))

// cniConfig is a bridge network private to containerd's network namespace.
var cniConfig = template.Must(template.New("cni").Parse(`{
  "cniVersion": "1.0.0",
  "name": "containerd-test",
  "plugins": [{
    "type": "bridge",
    "bridge": "ctrdtest0",
    "isGateway": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "10.88.0.0/24"}]],
      "dataDir": "{{.Dir}}/cni/ipam"
    }
  }]
}
`))

// TestRunsContainers starts containerd as the lane's node does, in a network
// namespace of its own, imports a pause image built from the e2e module's
// pause binary, runs it with ctr and then through the CRI as the kubelet
// would, and leaves no process, mount, cgroup or network namespace behind.
//
// It needs root and the binaries of `make e2e-bins` (or E2E_BIN).
func TestRunsContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts containerd")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: containerd creates mounts, cgroups and a network namespace")
	}
	bin := os.Getenv("E2E_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "_output", "e2e", "bin")
	}
	bin, _ = filepath.Abs(bin)
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "ctr", "pause"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Skipf("no %s in %s: run `make e2e-bins` or set E2E_BIN", b, bin)
		}
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Skip("needs runc")
	}

	id := fmt.Sprintf("ctrd-test-%d", os.Getpid()) // netns and cgroup name
	dir := t.TempDir()
	// Dirs containerd creates outside its root and state whatever the config:
	// the shims' sockets (/run/containerd/s, fixed in containerd's shim
	// package) and the CNI result cache (/var/lib/cni, fixed in libcni). The
	// test removes them after if they are new and empty.
	var newDirs []string
	for _, d := range []string{"/run/containerd", "/var/lib/cni"} {
		if _, err := os.Stat(d); os.IsNotExist(err) {
			newDirs = append(newDirs, d)
		}
	}
	t.Cleanup(func() { cleanUp(t, dir, id, newDirs) })

	writeImage(t, filepath.Join(bin, "pause"), pauseImage, filepath.Join(dir, "pause.tar"))
	vars := struct{ Dir, SandboxImage, Runc string }{dir, pauseImage, runc}
	writeTemplate(t, config, vars, filepath.Join(dir, "config.toml"))
	writeTemplate(t, cniConfig, vars, filepath.Join(dir, "cni", "net.d", "10-containerd-test.conflist"))

	run(t, "ip", "netns", "add", id)
	run(t, "ip", "-n", id, "link", "set", "lo", "up")
	startContainerd(t, bin, dir, id)

	ctr := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, "ctr"),
			append([]string{"--address", filepath.Join(dir, "containerd.sock"), "--namespace", "k8s.io"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		return cmd
	}
	output(t, ctr("images", "import", filepath.Join(dir, "pause.tar")))

	t.Run("ctr", func(t *testing.T) {
		var out bytes.Buffer
		c := ctr("run", "--rm", "--fifo-dir", filepath.Join(dir, "fifo"),
			"--runc-binary", runc, "--runc-root", filepath.Join(dir, "state", "runc"),
			"--cgroup", "/"+id+"/ctr", pauseImage, "pause")
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "the task to run", func() bool {
			o, _ := ctr("tasks", "ls").Output()
			return bytes.Contains(o, []byte("RUNNING"))
		})
		output(t, ctr("tasks", "kill", "--signal", "SIGTERM", "pause"))
		if err := c.Wait(); err != nil {
			t.Fatalf("ctr run: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "pause: terminated, exiting") {
			t.Errorf("ctr run printed %q, want pause's exit line", out.String())
		}
	})

	t.Run("CRI", func(t *testing.T) { runPod(t, dir, id) })
}

// runPod makes the calls the kubelet makes for a one-container pod, and
// checks the container exits 0 on StopContainer's SIGTERM.
func runPod(t *testing.T, dir, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "containerd.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := cri.NewRuntimeServiceClient(conn)

	v, err := rt.Version(ctx, &cri.VersionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CRI %s: %s %s", v.RuntimeApiVersion, v.RuntimeName, v.RuntimeVersion)
	var conditions []*cri.RuntimeCondition
	waitFor(t, 20*time.Second, "the runtime and network to be ready", func() bool {
		st, err := rt.Status(ctx, &cri.StatusRequest{})
		if err != nil {
			return false
		}
		conditions = st.Status.Conditions
		ready := 0
		for _, c := range conditions {
			if c.Status && (c.Type == cri.RuntimeReady || c.Type == cri.NetworkReady) {
				ready++
			}
		}
		return ready == 2
	})
	for _, c := range conditions {
		if !c.Status {
			t.Errorf("runtime condition %s is false: %s: %s", c.Type, c.Reason, c.Message)
		}
	}

	podConfig := &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: "pause", Namespace: "default", Uid: id},
		Hostname:     "pause",
		LogDirectory: filepath.Join(dir, "pods"),
		Linux:        &cri.LinuxPodSandboxConfig{CgroupParent: "/" + id + "/pod"},
	}
	pod, err := rt.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: podConfig})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := rt.PodSandboxStatus(ctx, &cri.PodSandboxStatusRequest{PodSandboxId: pod.PodSandboxId})
	if err != nil {
		t.Fatal(err)
	}
	if ip := ps.Status.GetNetwork().GetIp(); !strings.HasPrefix(ip, "10.88.0.") {
		t.Errorf("pod IP %q, want one from the CNI bridge's 10.88.0.0/24", ip)
	}
	if m := mountsUnder(t, filepath.Join(dir, "state")); !containsPart(m, "/netns/") {
		t.Errorf("no pod network namespace mounted under the state dir; mounts there: %q", m)
	}

	c, err := rt.CreateContainer(ctx, &cri.CreateContainerRequest{
		PodSandboxId:  pod.PodSandboxId,
		SandboxConfig: podConfig,
		Config: &cri.ContainerConfig{
			Metadata: &cri.ContainerMetadata{Name: "pause"},
			Image:    &cri.ImageSpec{Image: pauseImage},
			LogPath:  "pause.log",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StartContainer(ctx, &cri.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StopContainer(ctx, &cri.StopContainerRequest{ContainerId: c.ContainerId, Timeout: 10}); err != nil {
		t.Fatal(err)
	}
	cs, err := rt.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: c.ContainerId})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Status.State != cri.ContainerState_CONTAINER_EXITED || cs.Status.ExitCode != 0 {
		t.Errorf("container %v with exit code %d, want exited with 0", cs.Status.State, cs.Status.ExitCode)
	}
	if _, err := rt.RemoveContainer(ctx, &cri.RemoveContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Error(err)
	}
	if _, err := rt.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: pod.PodSandboxId}); err != nil {
		t.Error(err)
	}
	if _, err := rt.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: pod.PodSandboxId}); err != nil {
		t.Error(err)
	}
}

// startContainerd runs containerd in network namespace id. nsenter execs
// containerd, so the process the test stops is containerd itself.
func startContainerd(t *testing.T, bin, dir, id string) {
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nsenter", "--net=/run/netns/"+id, "--",
		filepath.Join(bin, "containerd"), "--config", filepath.Join(dir, "config.toml"))
	// containerd finds its shim on PATH.
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); log.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Logf("containerd's log:\n%s", b)
		}
	})
	sock := filepath.Join(dir, "containerd.sock")
	waitFor(t, 20*time.Second, "containerd's socket", func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
}

// cleanUp kills the shims of the test's containerd, unmounts what is left
// under dir, removes the test's cgroups and network namespace and the empty
// dirs under newDirs; then fails the test if a mount is still there.
func cleanUp(t *testing.T, dir, id string, newDirs []string) {
	sock := filepath.Join(dir, "containerd.sock")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		args := strings.Split(string(b), "\x00")
		if len(args) > 0 && filepath.Base(args[0]) == "containerd-shim-runc-v2" && strings.Contains(string(b), sock) {
			var pid int
			fmt.Sscanf(p, "/proc/%d/cmdline", &pid)
			t.Logf("killing shim %d left behind", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	mounts := mountsUnder(t, dir)
	sort.Sort(sort.Reverse(sort.StringSlice(mounts))) // children first
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", m, err)
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/" + id)
	for _, cg := range cgroups {
		var dirs []string
		_ = filepath.WalkDir(cg, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil {
				t.Errorf("remove cgroup: %v", err)
			}
		}
	}
	if _, err := os.Stat("/run/netns/" + id); err == nil {
		if out, err := exec.Command("ip", "netns", "delete", id).CombinedOutput(); err != nil {
			t.Errorf("ip netns delete %s: %v: %s", id, err, out)
		}
	}
	for _, d := range newDirs {
		removeEmptyDirs(d)
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("mounts left under %s: %q", dir, m)
	}
}

// removeEmptyDirs removes dir if it holds nothing but empty dirs.
func removeEmptyDirs(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyDirs(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.Remove(dir) // fails, as it should, if anything is left
}

// mountsUnder lists the mount points at or below dir.
func mountsUnder(t *testing.T, dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mounts []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			mounts = append(mounts, fields[4])
		}
	}
	return mounts
}

func containsPart(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}

// writeImage writes a docker-archive tarball of a FROM-scratch image whose
// only layer is the binary at /<its name>, which is also its entrypoint.
func writeImage(t *testing.T, binary, ref, path string) {
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	base := filepath.Base(binary)
	if err := tw.WriteHeader(&tar.Header{Name: base, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS:           "linux",
		Architecture: runtime.GOARCH,
		RootFS:       v1.RootFS{Type: "layers", DiffIDs: mustDiffIDs(t, layer)},
		Config:       v1.Config{Entrypoint: []string{"/" + base}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		t.Fatal(err)
	}
}

func mustDiffIDs(t *testing.T, layer v1.Layer) []v1.Hash {
	d, err := layer.DiffID()
	if err != nil {
		t.Fatal(err)
	}
	return []v1.Hash{d}
}

func writeTemplate(t *testing.T, tmpl *template.Template, vars any, path string) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, vars); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

func output(t *testing.T, cmd *exec.Cmd) []byte {
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(cmd.Args, " "), err, out)
	}
	return out
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
