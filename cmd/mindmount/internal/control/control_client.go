package control

import (
	"context"
	"encoding/json"
	"errors"
)

// Ask sends req to the daemon serving the repository whose git directory
// is gitDir and waits for its answer (as long as ctx allows: a
// consolidation takes as long as the model). It returns ErrNoDaemon when
// none listens; a daemon's error is an *Error whose kind errors.Is knows.
func Ask(ctx context.Context, gitDir string, req Request) (Answer, error) {
	c, err := dial(ctx, socketPath(gitDir))
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
