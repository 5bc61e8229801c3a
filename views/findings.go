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

// FindingsPage returns the page of ListFindings' list that follows the
// cursor after ("" for the first), of at most limit findings, and the
// cursor of the next page ("" after the last).
func (v *Views) FindingsPage(ctx context.Context, after string, limit int) ([]record.Finding, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	fs, next, err := v.Store.FindingsPage(after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("list findings: %w", pageError(err))
	}
	return fs, next, nil
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
