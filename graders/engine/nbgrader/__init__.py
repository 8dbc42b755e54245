"""nbgrader's route: scores from the kit's engine outside the student's kernel, its log, the course's tamper
guard. Like :mod:`graders.engine.routes`, it may import every other package.
"""
