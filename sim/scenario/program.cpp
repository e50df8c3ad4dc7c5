// Names of the compiled form's opcodes, for diagnostics and dumps.
#include "sim/scenario/program.h"

namespace gmp::scenario {

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::Compute: return "Compute";
    case Opcode::Go: return "Go";
    case Opcode::Exit: return "Exit";
    case Opcode::Jump: return "Jump";
    case Opcode::LoopStart: return "LoopStart";
    case Opcode::LoopNext: return "LoopNext";
    case Opcode::RangeRecv: return "RangeRecv";
    case Opcode::Gosched: return "Gosched";
    case Opcode::Send: return "Send";
    case Opcode::Recv: return "Recv";
    case Opcode::Close: return "Close";
    case Opcode::Select: return "Select";
    case Opcode::Lock: return "Lock";
    case Opcode::Unlock: return "Unlock";
    case Opcode::WgAdd: return "WgAdd";
    case Opcode::WgDone: return "WgDone";
    case Opcode::WgWait: return "WgWait";
    case Opcode::Sleep: return "Sleep";
    case Opcode::AfterFunc: return "AfterFunc";
    case Opcode::Syscall: return "Syscall";
    case Opcode::BusyPoll: return "BusyPoll";
    case Opcode::LockOSThread: return "LockOSThread";
    case Opcode::UnlockOSThread: return "UnlockOSThread";
    case Opcode::Parallel: return "Parallel";
    case Opcode::ParallelNext: return "ParallelNext";
    case Opcode::Submit: return "Submit";
    case Opcode::Bench: return "Bench";
    case Opcode::ResetTimer: return "ResetTimer";
    case Opcode::AtomicAdd: return "AtomicAdd";
    case Opcode::Read: return "Read";
    case Opcode::Write: return "Write";
    case Opcode::Accept: return "Accept";
    case Opcode::CloseConn: return "CloseConn";
    case Opcode::Alloc: return "Alloc";
    case Opcode::Release: return "Release";
    case Opcode::GC: return "GC";
    case Opcode::ReadMemStats: return "ReadMemStats";
    case Opcode::Gomaxprocs: return "Gomaxprocs";
    case Opcode::Local: return "Local";
  }
  return "?";
}

}  // namespace gmp::scenario
