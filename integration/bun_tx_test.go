package integration

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
)

// TestBunNestedRunInTx: bun's RunInTx inside a transaction runs through
// SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT; a failing inner
// one rolls back its own rows only, and SELECT ... FOR UPDATE (bun's For)
// reads in the transaction.
func TestBunNestedRunInTx(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	_, err = db.NewCreateTable().Model((*Book)(nil)).Exec(ctx)
	require.NoError(t, err)

	_, err = db.NewInsert().Model(&Book{Title: "before"}).Exec(ctx)
	require.NoError(t, err)
	errInner := errors.New("inner fails")
	require.NoError(t, db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&Book{Title: "outer"}).Exec(ctx); err != nil {
			return err
		}
		err := tx.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&Book{Title: "inner"}).Exec(ctx); err != nil {
				return err
			}
			return errInner
		})
		require.ErrorIs(t, err, errInner)
		if err := tx.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewInsert().Model(&Book{Title: "kept"}).Exec(ctx)
			return err
		}); err != nil {
			return err
		}
		var b Book
		return tx.NewSelect().Model(&b).Where("title = ?", "before").For("UPDATE").Scan(ctx)
	}))
	var books []Book
	require.NoError(t, db.NewSelect().Model(&books).Order("id").Scan(ctx))
	require.Equal(t, []string{"before", "outer", "kept"}, titles(books))
}
