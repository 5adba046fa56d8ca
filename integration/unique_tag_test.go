package integration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss"
)

// Subscriber has GORM's unique tag (not uniqueIndex): AutoMigrate
// declares it in CREATE TABLE as CONSTRAINT uni_subscribers_email UNIQUE,
// and a second AutoMigrate adds it again with ALTER TABLE ... ADD
// CONSTRAINT unless information_schema.columns says the column is UNI.
type Subscriber struct {
	ID    int64  `gorm:"primaryKey"`
	Email string `gorm:"size:191;unique"`
}

func TestGormUniqueTag(t *testing.T) {
	db := openGorm(t, true)
	require.NoError(t, db.AutoMigrate(&Subscriber{}))
	require.NoError(t, db.AutoMigrate(&Subscriber{}), "a second AutoMigrate changes nothing")
	require.NoError(t, db.Create(&Subscriber{ID: 1, Email: "a@x"}).Error)
	err := db.Create(&Subscriber{ID: 2, Email: "a@x"}).Error
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "Duplicate entry 'a@x'")
	var n int64
	require.NoError(t, db.Model(&Subscriber{}).Count(&n).Error)
	require.EqualValues(t, 1, n)
}
