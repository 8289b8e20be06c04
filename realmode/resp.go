package realmode

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/locksim/locksim/nodes/redis"
)

// RESP2 as redis-server speaks it to a client that has not sent HELLO 3
// (https://redis.io/docs/reference/protocol-spec/): a command is an array
// of bulk strings; a reply is a simple string (+), an error (-), an integer
// (:), a bulk string ($, $-1 for nil) or an array (*, *-1 for nil).

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args []string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// maxBulk bounds a bulk string or array length read from a server (Redis'
// own proto-max-bulk-len default is 512 MB; a lock's values are tiny, so a
// larger length means a broken stream).
const maxBulk = 64 << 20

// readValue reads one RESP2 reply into the model's Value type.
func readValue(r *bufio.Reader) (redis.Value, error) {
	line, err := readLine(r)
	if err != nil {
		return redis.Value{}, err
	}
	if len(line) == 0 {
		return redis.Value{}, errors.New("resp: empty line")
	}
	body := string(line[1:])
	switch line[0] {
	case '+':
		return redis.Status(body), nil
	case '-':
		return redis.Err(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return redis.Value{}, fmt.Errorf("resp: bad integer %q", body)
		}
		return redis.Int(n), nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n > maxBulk || n < -1 {
			return redis.Value{}, fmt.Errorf("resp: bad bulk length %q", body)
		}
		if n == -1 {
			return redis.Nil(), nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return redis.Value{}, err
		}
		return redis.Bulk(string(buf[:n])), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n > maxBulk || n < -1 {
			return redis.Value{}, fmt.Errorf("resp: bad array length %q", body)
		}
		if n == -1 {
			return redis.Nil(), nil
		}
		vs := make([]redis.Value, n)
		for i := range vs {
			if vs[i], err = readValue(r); err != nil {
				return redis.Value{}, err
			}
		}
		return redis.Array(vs...), nil
	}
	return redis.Value{}, fmt.Errorf("resp: unknown reply type %q", line[0])
}

func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, errors.New("resp: line without CRLF")
	}
	return line[:len(line)-2], nil
}
