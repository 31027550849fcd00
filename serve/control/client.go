package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
)

// Ask sends req to the daemon serving the repository whose git directory
// is gitDir and waits for its answer (as long as ctx allows: a
// consolidation takes as long as the model). It returns ErrNoDaemon when
// none listens; a daemon's error is an *Error whose kind errors.Is knows.
func Ask(ctx context.Context, gitDir string, req Request) (Answer, error) {
	c, err := Dial(ctx, socketPath(gitDir))
	if err != nil {
		return Answer{}, ErrNoDaemon
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	line, err := json.Marshal(req)
	if err != nil {
		return Answer{}, err
	}
	// A daemon that refuses the peer answers before reading: the write
	// may then fail while its answer waits to be read.
	_, werr := c.Write(append(line, '\n'))
	var a Answer
	if err := json.NewDecoder(c).Decode(&a); err != nil {
		if ctx.Err() != nil {
			return Answer{}, ctx.Err()
		}
		if werr != nil {
			return Answer{}, werr
		}
		return Answer{}, errors.Join(ErrStopping, err)
	}
	if a.Error != "" {
		return a, &Error{Msg: a.Error, Kind: a.Kind}
	}
	return a, nil
}

// Attach asks the daemon serving the repository whose git directory is
// gitDir for the stream verb of req. On success the returned connection
// carries the verb's own protocol; its Answer came first. ErrNoDaemon
// when none listens.
func Attach(ctx context.Context, gitDir string, req Request) (net.Conn, Answer, error) {
	c, err := Dial(ctx, socketPath(gitDir))
	if err != nil {
		return nil, Answer{}, ErrNoDaemon
	}
	line, err := json.Marshal(req)
	if err != nil {
		c.Close()
		return nil, Answer{}, err
	}
	_, werr := c.Write(append(line, '\n'))
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	// The answer is read a byte at a time: what follows it is the
	// stream's, and must stay in the connection.
	var b []byte
	one := make([]byte, 1)
	for len(b) < maxRequest {
		if _, err := c.Read(one); err != nil {
			c.Close()
			if werr != nil {
				return nil, Answer{}, werr
			}
			return nil, Answer{}, errors.Join(ErrStopping, err)
		}
		if one[0] == '\n' {
			break
		}
		b = append(b, one[0])
	}
	var a Answer
	if err := json.Unmarshal(b, &a); err != nil {
		c.Close()
		return nil, Answer{}, fmt.Errorf("the daemon's answer: %w", err)
	}
	if a.Error != "" {
		c.Close()
		return nil, a, &Error{Msg: a.Error, Kind: a.Kind}
	}
	return c, a, nil
}
