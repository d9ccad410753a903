#include "race_checker.h"

#include <algorithm>

namespace peerreduce::sim {

RaceChecker::RaceChecker(int world_size, Describer describe)
    : world_size_(world_size),
      describe_(std::move(describe)),
      clocks_(static_cast<std::size_t>(world_size), VectorClock(static_cast<std::size_t>(world_size), 0)),
      owners_(static_cast<std::size_t>(world_size)) {}

void RaceChecker::join(int rank, const VectorClock& other) {
  VectorClock& mine = clocks_[static_cast<std::size_t>(rank)];
  for (std::size_t i = 0; i < mine.size() && i < other.size(); ++i) mine[i] = std::max(mine[i], other[i]);
}

bool RaceChecker::ordered(const AccessSite& earlier, int rank) const {
  if (earlier.rank < 0) return true;  // no such access
  return clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(earlier.rank)] >= earlier.clock;
}

RaceChecker::OperationShadow& RaceChecker::shadow(int owner, std::uint64_t op) {
  auto& ops = owners_[static_cast<std::size_t>(owner)];
  for (auto& s : ops) {
    if (s.op == op) return s;
  }
  if (ops.size() >= kShadowOperations) ops.pop_front();
  OperationShadow fresh;
  fresh.op = op;
  fresh.any_read.resize(static_cast<std::size_t>(world_size_));
  fresh.any_write.resize(static_cast<std::size_t>(world_size_));
  ops.push_back(std::move(fresh));
  return ops.back();
}

RaceChecker::SlotShadow& RaceChecker::slot(OperationShadow& op_shadow, int slot_index) {
  const auto index = static_cast<std::size_t>(slot_index);
  if (index >= op_shadow.slots.size()) op_shadow.slots.resize(index + 1);
  SlotShadow& s = op_shadow.slots[index];
  if (s.last_read.empty()) {
    s.slot = slot_index;
    s.last_read.resize(static_cast<std::size_t>(world_size_));
  }
  return s;
}

void RaceChecker::report(const char* what, const AccessSite& now, const AccessSite& before, int owner, int slot_index) {
  if (reports_.size() >= kMaxReports) return;
  reports_.push_back(std::string(what) + " on rank " + std::to_string(owner) + "'s scratch slot " +
                     std::to_string(slot_index) + ": " + describe_(now) + " is not ordered after " + describe_(before));
}

void RaceChecker::read(int rank, std::uint64_t op, int step, int owner, int slot_index) {
  const AccessSite site{rank, clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)], op, step};
  for (auto& other : owners_[static_cast<std::size_t>(owner)]) {
    if (other.op == op) continue;
    for (const auto& w : other.any_write) {
      if (!ordered(w, rank)) report("read/write race across operations", site, w, owner, slot_index);
    }
  }
  OperationShadow& s = shadow(owner, op);
  SlotShadow& sl = slot(s, slot_index);
  if (sl.last_write.rank < 0) {
    if (reports_.size() < kMaxReports) {
      reports_.push_back("read of unwritten data on rank " + std::to_string(owner) + "'s scratch slot " +
                         std::to_string(slot_index) + ": " + describe_(site) +
                         " reads before any write of this operation (it did not wait for the writer)");
    }
  } else if (!ordered(sl.last_write, rank)) {
    report("read/write race", site, sl.last_write, owner, slot_index);
  }
  sl.last_read[static_cast<std::size_t>(rank)] = site;
  s.any_read[static_cast<std::size_t>(rank)] = site;
}

void RaceChecker::write(int rank, std::uint64_t op, int step, int owner, int slot_index) {
  const AccessSite site{rank, clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)], op, step};
  for (auto& other : owners_[static_cast<std::size_t>(owner)]) {
    if (other.op == op) continue;
    for (const auto& r : other.any_read) {
      if (!ordered(r, rank)) report("write/read race across operations", site, r, owner, slot_index);
    }
    for (const auto& w : other.any_write) {
      if (!ordered(w, rank)) report("write/write race across operations", site, w, owner, slot_index);
    }
  }
  OperationShadow& s = shadow(owner, op);
  SlotShadow& sl = slot(s, slot_index);
  if (!ordered(sl.last_write, rank)) report("write/write race", site, sl.last_write, owner, slot_index);
  for (const auto& r : sl.last_read) {
    if (!ordered(r, rank)) report("write/read race", site, r, owner, slot_index);
  }
  sl.last_write = site;
  s.any_write[static_cast<std::size_t>(rank)] = site;
}

}  // namespace peerreduce::sim
