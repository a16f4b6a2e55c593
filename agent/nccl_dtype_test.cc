#include "agent/nccl_dtype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "agent/nccl_request.h"

namespace cc::agent {
namespace {

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool IsHalfNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool IsBf16Nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

TEST(NcclDtype, NamesParseBackAndMapToNcclTypes) {
  for (NcclDtype t : {NcclDtype::kFloat, NcclDtype::kHalf, NcclDtype::kBf16}) {
    ASSERT_TRUE(ParseNcclDtype(NcclDtypeName(t)) == t) << NcclDtypeName(t);
  }
  EXPECT_EQ(NcclDataType(NcclDtype::kFloat), ncclFloat32);
  EXPECT_EQ(NcclDataType(NcclDtype::kHalf), ncclFloat16);
  EXPECT_EQ(NcclDataType(NcclDtype::kBf16), ncclBfloat16);
  EXPECT_EQ(static_cast<int>(ncclBfloat16), 9);  // nccl.h; gpu_abi_test checks the header
  EXPECT_EQ(NcclDtypeBytes(NcclDtype::kFloat), 4u);
  EXPECT_EQ(NcclDtypeBytes(NcclDtype::kHalf), 2u);
  EXPECT_EQ(NcclDtypeBytes(NcclDtype::kBf16), 2u);
  EXPECT_FALSE(ParseNcclDtype("fp16").has_value());
  EXPECT_FALSE(ParseNcclDtype("Float").has_value());
  EXPECT_FALSE(ParseNcclDtype("").has_value());
}

TEST(NcclDtype, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (IsHalfNan(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(IsHalfNan(FloatToHalf(f))) << h;
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), h) << "half bits " << h << " = " << f;
  }
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
}

TEST(NcclDtype, EveryBf16RoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float f = Bf16ToFloat(static_cast<uint16_t>(b));
    if (IsBf16Nan(static_cast<uint16_t>(b))) {
      EXPECT_TRUE(std::isnan(f)) << b;
      EXPECT_TRUE(IsBf16Nan(FloatToBf16(f))) << b;
      continue;
    }
    ASSERT_EQ(FloatToBf16(f), b) << "bf16 bits " << b << " = " << f;
  }
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0x4380), 256.0f);
}

TEST(NcclDtype, ConversionsRoundToNearestEven) {
  // half: 11 significant bits, so 1 + 2^-11 is a tie between 1 and 1 + 2^-10.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: even is 1
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: even is up
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the tie above the largest half: infinity
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie with the smallest subnormal
  EXPECT_EQ(FloatToHalf(1.5f * std::ldexp(1.0f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002);  // 1.5 subnormal units: even 2
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(IsHalfNan(FloatToHalf(std::numeric_limits<float>::quiet_NaN())));
  // bf16: 8 significant bits, so 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(FloatToBf16(257.0f), 0x4380);                // 257 is not a bf16: a tie, to even 256
  EXPECT_EQ(FloatToBf16(259.0f), 0x4382);                // to even 260
  EXPECT_EQ(FloatToBf16(FromBits(0x7f7fffff)), 0x7f80);  // float max overflows
  EXPECT_TRUE(IsBf16Nan(FloatToBf16(FromBits(0x7f800001))));  // a NaN whose top bits are inf's
}

#if defined(__FLT16_MAX__)
TEST(NcclDtype, HalfConversionAgreesWithTheCompilersFloat16) {
  std::mt19937 rng(16);
  std::uniform_int_distribution<uint32_t> bits;
  for (int k = 0; k < 200000; ++k) {
    float f = FromBits(bits(rng));
    if (std::isnan(f)) continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, sizeof want);
    ASSERT_EQ(FloatToHalf(f), want) << f;
  }
}
#endif

// Sums the ranks' values as a reduction in `t` would, rounding every partial
// sum to the type, in the given order.
float SumInType(const NcclPattern& p, NcclDtype t, const std::vector<int>& order, size_t i) {
  auto round = [t](float v) {
    if (t == NcclDtype::kHalf) return HalfToFloat(FloatToHalf(v));
    if (t == NcclDtype::kBf16) return Bf16ToFloat(FloatToBf16(v));
    return v;
  };
  float sum = 0;
  for (int r : order) sum = round(sum + round(p.Value(r, i)));
  return sum;
}

TEST(NcclDtype, SixteenBitPatternsSumExactlyInEveryOrder) {
  for (NcclDtype t : {NcclDtype::kHalf, NcclDtype::kBf16}) {
    for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 16, 31, 32, 33, 100, 257, kMaxExactRanks}) {
      NcclPattern p(t, n);
      std::vector<int> up(n), down(n), shuffled(n);
      for (int r = 0; r < n; ++r) up[r] = down[n - 1 - r] = shuffled[r] = r;
      std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(n));
      for (size_t i = 0; i < 2100; i += (n > 300 ? 7 : 1)) {
        float want = p.Expected(i);
        ASSERT_GE(want, 1.0f) << "every element has a contributor";
        ASSERT_LE(want, 256.0f);
        for (const auto* order : {&up, &down, &shuffled}) {
          ASSERT_EQ(SumInType(p, t, *order, i), want)
              << NcclDtypeName(t) << " n=" << n << " i=" << i;
        }
      }
    }
  }
}

TEST(NcclDtype, EveryRankContributesToSixteenBitData) {
  for (int n : {2, 8, 33, 1000}) {
    NcclPattern p(NcclDtype::kBf16, n);
    for (int r = 0; r < n; ++r) {
      bool seen = false;
      for (size_t i = 0; i < 1024 && !seen; ++i) seen = p.Value(r, i) != 0;
      ASSERT_TRUE(seen) << "n=" << n << " rank " << r;
    }
  }
}

TEST(NcclDtype, FloatPatternIsTheRequestsOwn) {
  NcclPattern p(NcclDtype::kFloat, 5);
  std::vector<float> got(50);
  p.Fill(3, 1000, got.size(), got.data());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k], NcclFillValue(3, 1000 + k));
    ASSERT_EQ(p.Expected(1000 + k), NcclExpectedSum(5, 1000 + k));
  }
}

TEST(NcclDtype, FilledDataDecodesToTheValues) {
  for (NcclDtype t : {NcclDtype::kHalf, NcclDtype::kBf16}) {
    NcclPattern p(t, 8);
    std::vector<uint16_t> buf(100);
    p.Fill(5, 77, buf.size(), buf.data());
    for (size_t k = 0; k < buf.size(); ++k) {
      float v = t == NcclDtype::kHalf ? HalfToFloat(buf[k]) : Bf16ToFloat(buf[k]);
      ASSERT_EQ(v, p.Value(5, 77 + k)) << NcclDtypeName(t) << " k=" << k;
    }
  }
}

TEST(NcclDtype, SixteenBitMismatchesAreCountedAndTheFirstIsNamed) {
  NcclPattern p(NcclDtype::kBf16, 4);
  std::vector<uint16_t> got(100);
  for (size_t k = 0; k < got.size(); ++k) got[k] = FloatToBf16(p.Expected(500 + k));
  size_t first = 0;
  float value = 0;
  EXPECT_EQ(p.CountMismatches(got.data(), got.size(), 500, &first, &value), 0u);
  got[9] = FloatToBf16(p.Expected(509) + 1);
  got[40] = 0x7fc0;  // the NaN the receive buffer starts as
  EXPECT_EQ(p.CountMismatches(got.data(), got.size(), 500, &first, &value), 2u);
  EXPECT_EQ(first, 509u);
  EXPECT_EQ(value, p.Expected(509) + 1);
}

TEST(NcclDtype, TheReceiveBuffersNanFillIsANanInBothSixteenBitTypes) {
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7fc0)));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(0x7fc0)));
}

}  // namespace
}  // namespace cc::agent
