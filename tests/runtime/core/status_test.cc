#include "runtime/core/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace recur {
namespace {

TEST(Status, DefaultIsOkAndHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kOk);
  EXPECT_EQ(s.message(), "");
  s.throw_if_error();  // must not throw
}

TEST(Status, WithContextPrefixesOnlyErrors) {
  EXPECT_EQ(invalid_argument("bad shape").with_context("node 'a' (Add)").message(),
            "node 'a' (Add): bad shape");
  EXPECT_EQ(ok_status().with_context("node 'a' (Add)").message(), "");
}

TEST(Status, HelpersCarryTheirCodes) {
  EXPECT_EQ(invalid_model("m").code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(not_implemented("m").code(), ErrorCode::kNotImplemented);
  EXPECT_EQ(out_of_range("m").code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(failed_precondition("m").code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(internal_error("m").code(), ErrorCode::kInternal);
}

TEST(Status, ThrowIfErrorThrowsTheCodeAndMessage) {
  try {
    out_of_range("index 7 of 3").throw_if_error();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange);
    EXPECT_STREQ(e.what(), "index 7 of 3");
  }
}

TEST(Result, HoldsAValueOrAStatus) {
  Result<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 42);
  EXPECT_TRUE(v.status().ok());

  Result<int> e = invalid_argument("no");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.status().message(), "no");
}

TEST(Result, ValueOrThrowThrowsOnError) {
  EXPECT_EQ(Result<std::string>("x").value_or_throw(), "x");
  EXPECT_THROW(Result<std::string>(ErrorCode::kIo, "disk").value_or_throw(), Error);
}

TEST(Result, ConvertsDerivedPointers) {
  struct Base {
    virtual ~Base() = default;
    virtual int id() const { return 1; }
  };
  struct Derived : Base {
    int id() const override { return 2; }
  };
  Result<std::unique_ptr<Base>> r = std::make_unique<Derived>();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->id(), 2);
}

}  // namespace
}  // namespace recur
