package launch

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// command sends one command to addr on a fresh connection and returns the
// first line of the reply ("+PONG", "-LOADING ...", ...). It is all the
// protocol launch needs: readiness probes and SHUTDOWN.
func command(addr string, timeout time.Duration, args ...string) (string, error) {
	var line string
	err := roundTrip(addr, timeout, args, func(br *bufio.Reader) (err error) {
		line, err = br.ReadString('\n')
		return err
	})
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// roundTrip dials addr, sends args as one RESP command and hands the
// reply's reader to read, all within timeout.
func roundTrip(addr string, timeout time.Duration, args []string, read func(*bufio.Reader) error) error {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return err
	}
	return read(bufio.NewReader(conn))
}

// bulkCommand sends one command whose reply is a bulk string (INFO) and
// returns the string.
func bulkCommand(addr string, timeout time.Duration, args ...string) (string, error) {
	var out string
	err := roundTrip(addr, timeout, args, func(br *bufio.Reader) error {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if !strings.HasPrefix(line, "$") {
			return fmt.Errorf("reply %q is not a bulk string", line)
		}
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return fmt.Errorf("reply %q is not a bulk string", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		out = string(buf[:n])
		return nil
	})
	return out, err
}
