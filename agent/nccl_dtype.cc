#include "agent/nccl_dtype.h"

#include <cmath>
#include <cstring>

#include "agent/nccl_request.h"

namespace cc::agent {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// `value` shifted right by `shift` bits, rounded to nearest, ties to even.
uint32_t ShiftRoundEven(uint32_t value, int shift) {
  uint32_t kept = value >> shift;
  uint32_t rest = value & ((uint32_t{1} << shift) - 1);
  uint32_t half = uint32_t{1} << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return kept;
}

}  // namespace

const char* NcclDtypeName(NcclDtype t) {
  switch (t) {
    case NcclDtype::kHalf:
      return "half";
    case NcclDtype::kBf16:
      return "bf16";
    case NcclDtype::kFloat:
      break;
  }
  return "float";
}

std::optional<NcclDtype> ParseNcclDtype(const std::string& name) {
  for (NcclDtype t : {NcclDtype::kFloat, NcclDtype::kHalf, NcclDtype::kBf16}) {
    if (name == NcclDtypeName(t)) return t;
  }
  return std::nullopt;
}

ncclDataType_t NcclDataType(NcclDtype t) {
  switch (t) {
    case NcclDtype::kHalf:
      return ncclFloat16;
    case NcclDtype::kBf16:
      return ncclBfloat16;
    case NcclDtype::kFloat:
      break;
  }
  return ncclFloat32;
}

size_t NcclDtypeBytes(NcclDtype t) { return t == NcclDtype::kFloat ? 4 : 2; }

uint16_t FloatToHalf(float f) {
  const uint32_t x = Bits(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
  // 65520 (0x477ff000) lies halfway between 65504, the largest half, and
  // 65536; the tie goes to the even 65536, which is out of range.
  if (ax >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // and infinity
  if (ax >= 0x38800000) {                                             // 2^-14 and up: a normal half
    // Rebias the exponent (127 -> 15) and drop 13 mantissa bits; a carry
    // out of the mantissa correctly bumps the exponent.
    uint32_t rebased = ax - ((127 - 15) << 23);
    return static_cast<uint16_t>(sign | ShiftRoundEven(rebased, 13));
  }
  // 2^-25 is halfway between 0 and the smallest subnormal 2^-24: even is 0.
  if (ax <= 0x33000000) return static_cast<uint16_t>(sign);
  // Subnormal: the value in units of 2^-24 is mant * 2^(exp - 126).
  const uint32_t mant = (ax & 0x7fffff) | 0x800000;
  const int exp = static_cast<int>(ax >> 23);  // 102..112 here
  return static_cast<uint16_t>(sign | ShiftRoundEven(mant, 126 - exp));
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);  // exact: mant < 2^10
    return sign ? -v : v;
  }
  if (exp == 31) return FromBits(sign | 0x7f800000 | (mant << 13));
  return FromBits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t FloatToBf16(float f) {
  const uint32_t x = Bits(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet
  // The top 16 bits, rounded; a carry into the exponent, up to infinity, is
  // the right result.
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float Bf16ToFloat(uint16_t b) { return FromBits(static_cast<uint32_t>(b) << 16); }

NcclPattern::NcclPattern(NcclDtype dtype, int nranks) : dtype_(dtype), nranks_(nranks) {
  if (dtype_ == NcclDtype::kFloat) return;
  stride_ = static_cast<size_t>((nranks + kMax16BitContributors - 1) / kMax16BitContributors);
  // Value(r, i) depends on i only through i % stride and i % 8.
  expected_.assign(stride_ * 8, 0.0f);
  for (size_t i = 0; i < expected_.size(); ++i) {
    for (int r = static_cast<int>(i % stride_); r < nranks_; r += static_cast<int>(stride_)) {
      expected_[i] += Value(r, i);
    }
  }
}

float NcclPattern::Value(int rank, size_t i) const {
  if (dtype_ == NcclDtype::kFloat) return NcclFillValue(rank, i);
  if (static_cast<size_t>(rank) % stride_ != i % stride_) return 0.0f;
  return static_cast<float>(1 + (static_cast<size_t>(rank) + i) % 8);
}

float NcclPattern::Expected(size_t i) const {
  if (dtype_ == NcclDtype::kFloat) return NcclExpectedSum(nranks_, i);
  return expected_[i % expected_.size()];
}

void NcclPattern::Fill(int rank, size_t first, size_t count, void* out) const {
  if (dtype_ == NcclDtype::kFloat) {
    float* f = static_cast<float*>(out);
    for (size_t k = 0; k < count; ++k) f[k] = NcclFillValue(rank, first + k);
    return;
  }
  uint16_t* h = static_cast<uint16_t*>(out);
  const bool half = dtype_ == NcclDtype::kHalf;
  for (size_t k = 0; k < count; ++k) {
    float v = Value(rank, first + k);
    h[k] = half ? FloatToHalf(v) : FloatToBf16(v);
  }
}

float NcclPattern::Decode(const void* data, size_t k) const {
  switch (dtype_) {
    case NcclDtype::kHalf:
      return HalfToFloat(static_cast<const uint16_t*>(data)[k]);
    case NcclDtype::kBf16:
      return Bf16ToFloat(static_cast<const uint16_t*>(data)[k]);
    case NcclDtype::kFloat:
      break;
  }
  return static_cast<const float*>(data)[k];
}

size_t NcclPattern::CountMismatches(const void* got, size_t count, size_t first_index,
                                    size_t* first_bad, float* first_got) const {
  if (dtype_ == NcclDtype::kFloat) {
    const float* f = static_cast<const float*>(got);
    size_t at = 0;
    size_t bad = ::cc::agent::CountMismatches(f, count, first_index, nranks_, &at);
    if (bad > 0) {
      if (first_bad) *first_bad = at;
      if (first_got) *first_got = f[at - first_index];
    }
    return bad;
  }
  size_t bad = 0;
  for (size_t k = 0; k < count; ++k) {
    float v = Decode(got, k);
    // Exact comparison on purpose: every value and sum is a small integer.
    if (v != Expected(first_index + k)) {
      if (bad == 0) {
        if (first_bad) *first_bad = first_index + k;
        if (first_got) *first_got = v;
      }
      ++bad;
    }
  }
  return bad;
}

}  // namespace cc::agent
