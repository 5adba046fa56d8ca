package integration

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

// Account is the model of a money transfer.
type Account struct {
	ID      int64 `gorm:"primaryKey;autoIncrement:false"`
	Owner   string
	Balance int64
}

// TestGormTransferReadsOwnWrites: GORM's Transaction with two Updates of
// the accounts, one of them twice, and an insert-then-delete: each read in
// the transaction sees the writes before it, and Commit applies them all.
func TestGormTransferReadsOwnWrites(t *testing.T) {
	db := openGorm(t, false)
	require.NoError(t, db.AutoMigrate(&Account{}))
	require.NoError(t, db.Create([]Account{{ID: 1, Owner: "ann", Balance: 100}, {ID: 2, Owner: "bob", Balance: 50}}).Error)

	err := db.Transaction(func(tx *gorm.DB) error {
		for _, step := range []struct {
			id, delta int64
		}{{1, -10}, {2, 10}, {1, -5}} {
			res := tx.Model(&Account{}).Where("id = ?", step.id).Update("balance", gorm.Expr("balance + ?", step.delta))
			if res.Error != nil {
				return res.Error
			}
			require.EqualValues(t, 1, res.RowsAffected)
		}
		var a Account
		if err := tx.First(&a, 1).Error; err != nil {
			return err
		}
		require.EqualValues(t, 85, a.Balance, "the transaction reads its own updates")
		if err := tx.Create(&Account{ID: 3, Owner: "tmp"}).Error; err != nil {
			return err
		}
		res := tx.Delete(&Account{}, 3)
		require.EqualValues(t, 1, res.RowsAffected, "the row the transaction inserted")
		return res.Error
	})
	require.NoError(t, err)

	var got []Account
	require.NoError(t, db.Order("id").Find(&got).Error)
	require.Equal(t, []Account{{ID: 1, Owner: "ann", Balance: 85}, {ID: 2, Owner: "bob", Balance: 60}}, got)
}
