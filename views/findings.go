package views

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// ListFindings returns every stored finding, newest first, with the issue
// each was filed as; none is an empty list, not nil.
func (v *Views) ListFindings(ctx context.Context) ([]record.Finding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs, err := v.Store.Findings()
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	if fs == nil {
		fs = []record.Finding{}
	}
	return fs, nil
}

// Finding returns the stored finding named by its id or by a prefix of it
// that no other id shares, as git names commits. A name that matches no
// finding, or several, is an *record.InputError.
func (v *Views) Finding(ctx context.Context, name string) (record.Finding, error) {
	if err := ctx.Err(); err != nil {
		return record.Finding{}, err
	}
	if name == "" {
		return record.Finding{}, &record.InputError{Err: errors.New("no finding named (see perfbot findings)")}
	}
	f, ok, err := v.Store.Finding(name)
	switch {
	case errors.Is(err, store.ErrAmbiguous):
		return record.Finding{}, &record.InputError{Err: err}
	case err != nil:
		return record.Finding{}, err
	case !ok:
		return record.Finding{}, &record.InputError{Err: fmt.Errorf("no finding %q (see perfbot findings)", name)}
	}
	return f, nil
}
