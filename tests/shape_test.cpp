#include <gtest/gtest.h>

#include "kgate/base/shape.hpp"

using kgate::DType;
using kgate::Shape;

TEST(Shape, IdFollowsGoogleBenchmarkConvention) {
  const Shape s({{"m", 4096}, {"n", 4096}}, DType::bf16);
  EXPECT_EQ(s.id(), "m:4096/n:4096/bf16");
  EXPECT_EQ(s.test_id(), "m=4096/n=4096/bf16");
  EXPECT_EQ(s.elements(), 4096 * 4096);
}

TEST(Shape, ParseIsTheInverseOfId) {
  for (const char* id : {"m:1/n:4097/bf16", "b:64/h:32/l:2048/d:128/fp16", "n:7/fp32"}) {
    EXPECT_EQ(Shape::parse(id).id(), id);
  }
  EXPECT_EQ(Shape::parse("m=3/n=5/bf16").id(), "m:3/n:5/bf16");
}

TEST(Shape, ParseRejectsMalformedIds) {
  EXPECT_THROW(Shape::parse("m:4096/n:4096"), std::invalid_argument);  // no dtype
  EXPECT_THROW(Shape::parse("m4096/bf16"), std::invalid_argument);
  EXPECT_THROW(Shape::parse("m:40x96/bf16"), std::invalid_argument);
  EXPECT_THROW(Shape::parse("m:0/bf16"), std::invalid_argument);  // dimensions are positive
}

TEST(Shape, AtNamesTheMissingDimension) {
  const Shape s({{"m", 2}}, DType::bf16);
  EXPECT_EQ(s.at("m"), 2);
  try {
    (void)s.at("k");
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("'k'"), std::string::npos) << e.what();
  }
}

TEST(Shape, RejectsNamesThatWouldBreakIds) {
  EXPECT_THROW(Shape({{"a:b", 1}}, DType::bf16), std::invalid_argument);
  EXPECT_THROW(Shape({{"a/b", 1}}, DType::bf16), std::invalid_argument);
  EXPECT_THROW(Shape({{"", 1}}, DType::bf16), std::invalid_argument);
}
