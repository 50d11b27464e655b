NAME          NANOBJ
OBJSENSE
    MAX
ROWS
 N  obj
 L  c
COLUMNS
    x         obj       nan          c         1
RHS
    RHS       c         1
ENDATA
