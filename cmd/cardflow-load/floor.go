package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/loadgen"
)

// floorAnswerEnv names, in the environment of a child process, the file
// whose bytes it answers every request with: the load generator is then a
// server that does nothing but net/http's work.
const floorAnswerEnv = "CARDFLOW_LOAD_FLOOR_ANSWER"

// runFloor measures the floor under the read runs: the same client, the
// same connections and the same answer bytes as getWorkflowExecutionById,
// from a separate process that answers without any work of its own. What
// the read runs measure above it is the service's; what they share with it
// is the machine's, net/http's and the client's.
func runFloor(ctx context.Context, c *loadgen.Client, cfg *config, path string) (loadgen.Result, error) {
	var answer json.RawMessage
	if err := c.Call(ctx, "GET", path, nil, &answer); err != nil {
		return loadgen.Result{}, fmt.Errorf("floor: read the answer to copy: %w", err)
	}
	f, err := os.CreateTemp("", "cardflow-load-floor-*.json")
	if err != nil {
		return loadgen.Result{}, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(answer)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return loadgen.Result{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return loadgen.Result{}, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), floorAnswerEnv+"="+f.Name())
	out, err := cmd.StdoutPipe()
	if err != nil {
		return loadgen.Result{}, err
	}
	cmd.Stderr = cfg.stderr
	if err := cmd.Start(); err != nil {
		return loadgen.Result{}, err
	}
	defer func() {
		// The process is ours to end; how it ended is no result.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return loadgen.Result{}, errors.New("floor: the answering process did not start")
	}
	fc, err := loadgen.NewClient("http://"+strings.TrimSpace(addr), cfg.key, cfg.conns)
	if err != nil {
		return loadgen.Result{}, err
	}
	defer fc.Close()
	r := loadgen.Run(ctx, "floor: the same answer, no work", cfg.conns, cfg.duration, fc.Get(path))
	return r, nil
}

// serveFloor answers every request on a loopback port with the bytes of
// file, as getWorkflowExecutionById answers, and prints the port's address.
func serveFloor(file string) error {
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return srv.Serve(ln)
}
