"""Output: annotated PGN, EPD with analysis opcodes, or JSON Lines, one result at a time.

python-chess reads the input and writes the PGN and EPD, so the notation (SAN, Chess960
castling, the `[%eval ...]` comment format lichess uses) has one owner. A writer turns one
`Result` into text; the caller writes the texts in input order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import chess
import chess.engine
import chess.pgn

from cb_async.analysis import annotate
from cb_async.analysis.model import Evaluation, GameAnalysis, PositionAnalysis, Problem
from cb_async.results import Score
from cb_async.version import __version__

if TYPE_CHECKING:
    from cb_async.analysis.job import Job

#: lichess shows at most this many plies of the better line.
VARIATION_PLIES = 20
#: EPD's largest centipawn evaluation: a mate in N is written as this minus the plies to mate.
EPD_MATE = 32767


def pov_score(score: Score, turn: chess.Color) -> chess.engine.PovScore | None:
    """python-chess's score; None for a checkmated side to move (lichess writes no eval there)."""
    if score.mate is not None:
        if score.mate == 0:
            return None
        return chess.engine.PovScore(chess.engine.Mate(score.mate), turn)
    return chess.engine.PovScore(chess.engine.Cp(score.cp or 0), turn)


def judgements(analysis: GameAnalysis) -> list[str | None]:
    """The mark of every move of the game (None for most)."""
    board = analysis.item.game.board()
    marks: list[str | None] = []
    evaluations = analysis.evaluations
    for index, move in enumerate(analysis.item.moves):
        mover = board.turn
        before = annotate.white_eval(evaluations[index].score, mover)
        board.push(move)
        after = annotate.white_eval(evaluations[index + 1].score, board.turn)
        best = evaluations[index].best
        marks.append(None if best == move.uci() else annotate.judge(before, after, mover))
    return marks


def game_statistics(analysis: GameAnalysis) -> tuple[dict[chess.Color, float | None], dict[chess.Color, int | None]]:
    """(accuracy, ACPL) of each side."""
    board = analysis.item.game.board()
    first = board.turn
    evals = []
    for index, evaluation in enumerate(analysis.evaluations):
        evals.append(annotate.white_eval(evaluation.score, first if index % 2 == 0 else not first))
    return annotate.game_accuracy(evals, first), annotate.average_centipawn_loss(evals, first)


def annotated_pgn(analysis: GameAnalysis) -> str:
    """The game with lichess-style evals, marks and better lines, and each side's figures."""
    source = analysis.item.game
    game = chess.pgn.Game(headers=source.headers)
    accuracy, acpl = game_statistics(analysis)
    for side, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
        side_acpl, side_accuracy = acpl[side], accuracy[side]
        if side_acpl is not None:
            game.headers[f"{name}ACPL"] = str(side_acpl)
        if side_accuracy is not None:
            game.headers[f"{name}Accuracy"] = f"{side_accuracy:.1f}"
    game.headers["Annotator"] = f"cb-async {__version__}"
    game.comment = source.comment
    marks = judgements(analysis)
    board = game.board()
    node: chess.pgn.GameNode = game
    original: chess.pgn.GameNode = source
    for index, move in enumerate(analysis.item.moves):
        original = original.variations[0]
        before = analysis.evaluations[index]
        child = node.add_main_variation(move, comment=original.comment, nags=original.nags)
        board.push(move)
        score = pov_score(analysis.evaluations[index + 1].score, board.turn)
        if score is not None:
            child.set_eval(score)
        mark = marks[index]
        if mark is not None:
            child.nags.add(annotate.NAGS[mark])
            board.pop()
            best = chess.Move.from_uci(before.best) if before.best else None
            if best is not None and board.is_legal(best):
                child.comment = f"{child.comment} {annotate.TITLES[mark]}. {board.san(best)} was best.".strip()
                _add_line(node, board, before.pv[:VARIATION_PLIES])
            board.push(move)
        node = child
    return str(game) + "\n\n"


def _add_line(node: chess.pgn.GameNode, board: chess.Board, pv: tuple[str, ...]) -> None:
    """The engine's line from `board` (the position at `node`) as a side variation."""
    line = board.copy(stack=False)
    for uci in pv:
        move = chess.Move.from_uci(uci)
        if not line.is_legal(move):
            return
        node = node.add_variation(move)
        line.push(move)


def epd_line(analysis: PositionAnalysis) -> str:
    """The position as EPD with bm, ce, acd, acn and pv (and its own other opcodes)."""
    item, evaluation = analysis.item, analysis.evaluation
    board = item.board
    operations: dict[str, Any] = {key: value for key, value in item.operations.items()
                                  if key not in ("bm", "ce", "acd", "acn", "pv", "dm", "hmvc", "fmvn")}
    moves = legal_line(board, evaluation.pv)
    if moves:
        operations["bm"] = [moves[0]]
    operations["ce"] = epd_ce(evaluation.score)
    if evaluation.score.mate is not None and evaluation.score.mate > 0:
        operations["dm"] = evaluation.score.mate
    operations["acd"] = evaluation.depth
    operations["acn"] = evaluation.nodes
    if moves:
        operations["pv"] = moves
    if item.full_fen:
        operations["hmvc"] = board.halfmove_clock
        operations["fmvn"] = board.fullmove_number
    return board.epd(**operations) + "\n"


def epd_ce(score: Score) -> int:
    """Centipawns; a mate as +-(32767 - plies to mate)."""
    if score.mate is None:
        return score.cp or 0
    if score.mate > 0:
        return EPD_MATE - (2 * score.mate - 1)
    return -(EPD_MATE - 2 * -score.mate)


def legal_line(board: chess.Board, pv: Sequence[str]) -> list[chess.Move]:
    """The moves of `pv` from `board` up to the first that is not legal there (an engine's line
    can outrun what it checked)."""
    line = board.copy(stack=False)
    moves = []
    for uci in pv:
        move = chess.Move.from_uci(uci)
        if not line.is_legal(move):
            break
        moves.append(move)
        line.push(move)
    return moves


def _record(evaluation: Evaluation, fen: str, played: chess.Move | None = None) -> dict[str, Any]:
    score: dict[str, int] = ({"mate": evaluation.score.mate} if evaluation.score.mate is not None
                             else {"cp": evaluation.score.cp or 0})
    record: dict[str, Any] = {"fen": fen, "played": played.uci() if played is not None else None,
                              "best": evaluation.best, "score": score, "pv": list(evaluation.pv),
                              "depth": evaluation.depth, "seldepth": evaluation.seldepth,
                              "nodes": evaluation.nodes, "time": evaluation.time_ms}
    if len(evaluation.lines) > 1:
        record["lines"] = [{"score": {"mate": line.score.mate} if line.score.mate is not None
                            else {"cp": line.score.cp or 0}, "pv": list(line.pv)} for line in evaluation.lines]
    return record


def json_lines(analysis: GameAnalysis | PositionAnalysis) -> str:
    """One JSON object per position: FEN, move played, best move, score (side to move), PV,
    depth, nodes, time (the only field that varies from run to run)."""
    if isinstance(analysis, PositionAnalysis):
        record = {"line": analysis.item.number, **_record(analysis.evaluation, analysis.item.board.fen())}
        if "id" in analysis.item.operations:
            record["id"] = analysis.item.operations["id"]
        return json.dumps(record) + "\n"
    out = []
    board = analysis.item.game.board()
    marks = judgements(analysis)
    for ply, evaluation in enumerate(analysis.evaluations):
        played = analysis.item.moves[ply] if ply < len(analysis.item.moves) else None
        record = {"game": analysis.item.number, "ply": ply, **_record(evaluation, board.fen(), played)}
        if played is not None:
            record["judgement"] = marks[ply]
            board.push(played)
        out.append(json.dumps(record) + "\n")
    return "".join(out)


def header(job: Job, engines: list[str] | None = None) -> dict[str, Any]:
    """What produced the output, and whether running it again gives the same bytes."""
    limits = job.limits
    return {"analyser": f"cb-async {__version__}", "engines": engines or [job.engine_name or job.engine.describe()],
            "command": job.engine.describe() if job.engine.command is not None else None,
            "nodes": limits.nodes, "depth": limits.depth, "movetime": limits.movetime, "multipv": limits.multipv,
            "reproducible": job.reproducible, "why": job.reproducible_why}


def header_lines(job: Job, *, as_json: bool, engines: list[str] | None = None) -> str:
    """The output's first lines: `%` lines (which PGN and EPD readers skip), or one JSON object."""
    fields = header(job, engines)
    if as_json:
        return json.dumps({"header": fields}) + "\n"
    budget = ", ".join(f"{name} {fields[name]}" for name in ("nodes", "depth", "movetime") if fields[name] is not None)
    verdict = ("reproducible: the same output for any number of workers, after any resume"
               if fields["reproducible"] else "not reproducible: another run may differ")
    lines = [f"% cb-async analyse {__version__}: {', '.join(fields['engines'])}"
             + (f" ({fields['command']})" if fields["command"] and len(fields["engines"]) == 1 else ""),
             f"% budget per position: {budget}, multipv {fields['multipv']}",
             f"% {verdict} ({fields['why']})"]
    return "\n".join(lines) + "\n\n"


def problem_line(problem: Problem, *, as_json: bool) -> str:
    """An item that could not be analysed, in its place in the output (nothing invented for it)."""
    if as_json:
        return json.dumps({problem.kind: problem.number, "problem": problem.reason}) + "\n"
    return f"% {problem}\n" + ("\n" if problem.kind == "game" else "")
