package integration

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"gorm.io/gorm"

	"github.com/flusslite/fluss"
)

// BunAccount is bun's model of an account, keyed by id.
type BunAccount struct {
	bun.BaseModel `bun:"table:bun_accounts"`

	ID      int64 `bun:"id,pk"`
	Owner   string
	Balance int64
}

// TestGormTransactionErrorCommitsNothing: a GORM Transaction whose
// function returns an error after an Update commits nothing.
func TestGormTransactionErrorCommitsNothing(t *testing.T) {
	db := openGorm(t, false)
	require.NoError(t, db.AutoMigrate(&Account{}))
	require.NoError(t, db.Create([]Account{{ID: 1, Owner: "ann", Balance: 70}, {ID: 2, Owner: "bob", Balance: 80}}).Error)
	var got []Account
	boom := errors.New("refused by the application")
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&Account{}).Where("id = ?", 1).Update("balance", gorm.Expr("balance - ?", 10)).Error; err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.NoError(t, db.Order("id").Find(&got).Error)
	require.Equal(t, []int64{70, 80}, []int64{got[0].Balance, got[1].Balance}, "a transaction that returned an error must commit nothing")
}

// TestGormConcurrentIncrementsConflict: two transactions read the same
// balance and write it back increased; the second to commit fails with
// ErrConflict instead of losing the first one's update.
func TestGormConcurrentIncrementsConflict(t *testing.T) {
	db := openGorm(t, true)
	require.NoError(t, db.AutoMigrate(&Account{}))
	require.NoError(t, db.Create(&Account{ID: 1, Owner: "ann", Balance: 100}).Error)

	t1, t2 := db.Begin(), db.Begin()
	require.NoError(t, t1.Error)
	require.NoError(t, t2.Error)
	var a1, a2 Account
	require.NoError(t, t1.First(&a1, 1).Error)
	require.NoError(t, t2.First(&a2, 1).Error)
	require.NoError(t, t1.Model(&a1).Update("balance", a1.Balance+10).Error)
	require.NoError(t, t2.Model(&a2).Update("balance", a2.Balance+20).Error)
	require.NoError(t, t1.Commit().Error)
	require.ErrorIs(t, t2.Commit().Error, fluss.ErrConflict)

	var got Account
	require.NoError(t, db.First(&got, 1).Error)
	require.Equal(t, int64(110), got.Balance)
}

// TestBunInsertThenDelete is bun's RunInTx inserting a row and deleting
// it again in one transaction, then inserting and updating one.
func TestBunInsertThenDelete(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	_, err = db.NewCreateTable().Model((*BunAccount)(nil)).Exec(ctx)
	require.NoError(t, err)

	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&BunAccount{ID: 1, Owner: "ann", Balance: 5}).Exec(ctx); err != nil {
			return err
		}
		res, err := tx.NewDelete().Model((*BunAccount)(nil)).Where("id = ?", 1).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errors.New("the delete did not see the row inserted before it")
		}
		if _, err := tx.NewInsert().Model(&BunAccount{ID: 2, Owner: "bob", Balance: 7}).Exec(ctx); err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model((*BunAccount)(nil)).Set("balance = balance * 2").Where("id = ?", 2).Exec(ctx)
		return err
	})
	require.NoError(t, err)
	var got []BunAccount
	require.NoError(t, db.NewSelect().Model(&got).Order("id").Scan(ctx))
	require.Equal(t, []BunAccount{{ID: 2, Owner: "bob", Balance: 14}}, got)
}

// TestSqlxTransfer is the two-step transfer written with sqlx: read,
// update one side, update the other, read back inside the transaction.
func TestSqlxTransfer(t *testing.T) {
	db, err := sqlx.Open("fluss", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	db.MustExec("CREATE TABLE accounts (id BIGINT, owner STRING, balance BIGINT NOT NULL, PRIMARY KEY (id) NOT ENFORCED)")
	db.MustExec("INSERT INTO accounts VALUES (1, 'ann', 100), (2, 'bob', 50)")

	tx, err := db.Beginx()
	require.NoError(t, err)
	tx.MustExec("UPDATE accounts SET balance = balance - ? WHERE id = ?", "10.00", 1)
	tx.MustExec("UPDATE accounts SET balance = balance + ? WHERE id = ?", "10.00", 2)
	var inside []int64
	require.NoError(t, tx.Select(&inside, "SELECT balance FROM accounts ORDER BY id"))
	require.Equal(t, []int64{90, 60}, inside)
	var outside []int64
	require.NoError(t, db.Select(&outside, "SELECT balance FROM accounts ORDER BY id"))
	require.Equal(t, []int64{100, 50}, outside, "another connection must not see the uncommitted transfer")
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Select(&outside, "SELECT balance FROM accounts ORDER BY id"))
	require.Equal(t, []int64{90, 60}, outside)
}
